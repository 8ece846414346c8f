package io.github.attn4j.jmh;

import java.util.Collection;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import io.github.attn4j.internal.kernel.Gemm;
import io.github.attn4j.internal.kernel.MatrixView;
import io.github.attn4j.internal.kernel.PackedMatrix;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Single-thread {@link Gemm#multiply} time, in milliseconds per call.
 *
 * <ul>
 *   <li>{@code squarePacked}, {@code squareUnpacked}: {@code size x size x size}, B prepacked
 *       once by {@link Gemm#pack} or packed inside every call.</li>
 *   <li>{@code projectionPacked}, {@code projectionUnpacked}: the fused Q/K/V projection of
 *       {@code L} tokens of width {@code E = dModel} (512 unless {@code -p dModel=...}),
 *       {@code (L x E) * (E x 3E)}, with B = W^T for a weight W stored {@code (3E, E)} row-major,
 *       as {@code nn.Linear} keeps it; {@code -p dModel=768 -p seqLen=2048} is BERT-base's
 *       projection of four sequences of 512 tokens.</li>
 * </ul>
 * A multiplication of an {@code M x K} by a {@code K x N} matrix does {@code 2 * M * N * K}
 * floating-point operations, so
 * <pre>GFLOP/s = 2 * M * N * K / (score_ms * 1e6)</pre>
 * ({@link #gflops}); at 512^3 that is {@code 268.4 / score_ms}, and for the projection with
 * L = 512 it is {@code 805.3 / score_ms}.
 *
 * <p>Run: {@code java -jar target/benchmarks.jar GemmBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s}
 * (add {@code -p size=512} to skip the slower 2048 case). The same options passed to this
 * class's {@link #main}, {@code java --add-modules jdk.incubator.vector -cp target/benchmarks.jar
 * io.github.attn4j.jmh.GemmBenchmark -f 1 -p size=512}, also print every result in GFLOP/s.
 * {@link JlamaGemmBenchmark} runs a peer library on the same shapes and operands.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class GemmBenchmark {
    /** Model width of {@link JlamaGemmBenchmark}'s projection, and of this class's by default ({@code dModel}). */
    static final int D_MODEL = 512;
    /** Output width of {@link JlamaGemmBenchmark}'s fused Q/K/V projection ({@code 3 * D_MODEL}). */
    static final int QKV = 3 * D_MODEL;

    /** Square operands. */
    @State(Scope.Thread)
    public static class Square {
        /** Side of the square matrices. */
        @Param({"512", "2048"})
        public int size;

        MatrixView a;
        MatrixView b;
        PackedMatrix packedB;
        float[] c;

        /** Random operands, B packed once. */
        @Setup
        public void setup() {
            a = MatrixView.rowMajor(random(size * size, 1), size, size);
            b = MatrixView.rowMajor(random(size * size, 2), size, size);
            packedB = Gemm.pack(b);
            c = new float[size * size];
        }
    }

    /** Projection operands: activations {@code L x E}, weight {@code (3E, E)} used as W^T. */
    @State(Scope.Thread)
    public static class Projection {
        /** Sequence length L (rows of the activations). */
        @Param({"512"})
        public int seqLen;

        /** Model width E (the depth of the product; 3E output columns). */
        @Param({"512"})
        public int dModel;

        MatrixView x;
        MatrixView wTransposed;
        PackedMatrix packedW;
        float[] y;

        /** Random activations and weight, the weight packed once. */
        @Setup
        public void setup() {
            x = MatrixView.rowMajor(random(seqLen * dModel, 3), seqLen, dModel);
            wTransposed = MatrixView.rowMajor(random(3 * dModel * dModel, 4), 0, 3 * dModel, dModel, dModel).transpose();
            packedW = Gemm.pack(wTransposed);
            y = new float[seqLen * 3 * dModel];
        }
    }

    /** {@code size^3} with B packed beforehand. */
    @Benchmark
    public float[] squarePacked(Square s) {
        Gemm.multiply(s.a, s.packedB, s.c, 0, s.size, false);
        return s.c;
    }

    /** {@code size^3} with B packed inside the call. */
    @Benchmark
    public float[] squareUnpacked(Square s) {
        Gemm.multiply(s.a, s.b, s.c, 0, s.size, false);
        return s.c;
    }

    /** {@code (L x E) * (E x 3E)} with the weight packed beforehand. */
    @Benchmark
    public float[] projectionPacked(Projection p) {
        Gemm.multiply(p.x, p.packedW, p.y, 0, 3 * p.dModel, false);
        return p.y;
    }

    /** {@code (L x E) * (E x 3E)} reading the transposed weight in every call. */
    @Benchmark
    public float[] projectionUnpacked(Projection p) {
        Gemm.multiply(p.x, p.wTransposed, p.y, 0, 3 * p.dModel, false);
        return p.y;
    }

    /** GFLOP/s of an {@code M x K} by {@code K x N} multiplication taking {@code msPerCall} ms. */
    public static double gflops(long m, long n, long k, double msPerCall) {
        return 2.0 * m * n * k / (msPerCall * 1e6);
    }

    /**
     * Runs the benchmarks of this class with JMH command-line options (e.g.
     * {@code -f 1 -wi 3 -i 5 -p size=512}) and prints each result's GFLOP/s.
     */
    public static void main(String[] args) throws RunnerException, CommandLineOptionException {
        runAndPrint(args, GemmBenchmark.class);
    }

    /**
     * Runs the benchmarks of the given classes (this one, or ones with the same {@code size} and
     * {@code seqLen} shapes and {@code square}/{@code projection} method names) with JMH
     * command-line options and prints each result's GFLOP/s.
     */
    static void runAndPrint(String[] args, Class<?>... benchmarks) throws RunnerException, CommandLineOptionException {
        OptionsBuilder options = new OptionsBuilder();
        options.parent(new CommandLineOptions(args));
        for (Class<?> benchmark : benchmarks) {
            options.include("^" + Pattern.quote(benchmark.getName()) + "\\.");
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            double ms = r.getPrimaryResult().getScore();
            double gflops;
            if (name.contains("projection")) {
                int seqLen = Integer.parseInt(r.getParams().getParam("seqLen"));
                String width = r.getParams().getParam("dModel");
                int dModel = width == null ? D_MODEL : Integer.parseInt(width);
                gflops = gflops(seqLen, 3L * dModel, dModel, ms);
            } else {
                int size = Integer.parseInt(r.getParams().getParam("size"));
                gflops = gflops(size, size, size, ms);
            }
            String shortName = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
            System.out.printf("%-72s %10.3f ms  %8.1f GFLOP/s%n",
                    shortName + " " + r.getParams().getParamsKeys()
                            .stream().map(key -> key + "=" + r.getParams().getParam(key)).toList(), ms, gflops);
        }
    }

    /** {@code length} uniform floats in [-1, 1) from {@code seed}: the operands of every GEMM benchmark. */
    static float[] random(int length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] data = new float[length];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) (2 * random.nextDouble() - 1);
        }
        return data;
    }
}
