package io.github.attn4j.jmh;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import com.github.tjake.jlama.tensor.FloatBufferTensor;
import com.github.tjake.jlama.tensor.operations.PanamaTensorOperations;
import com.github.tjake.jlama.util.MachineSpec;
import io.github.attn4j.internal.kernel.Gemm;
import io.github.attn4j.internal.kernel.MatrixView;
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
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;

/**
 * Peer comparison: Jlama's single-precision matrix multiplication,
 * {@code PanamaTensorOperations.batchDotProduct} of {@code com.github.tjake:jlama-core} (a
 * benchmark-scope dependency), on the shapes and operands of {@link GemmBenchmark}, timed in the
 * same unit (milliseconds per call, one thread), so the two compare directly:
 * {@code GFLOP/s = 2 * M * N * K / (score_ms * 1e6)}.
 *
 * <p>{@code batchDotProduct(c, a, b, 0, 0, K)} computes {@code C = A * B^T}: A is {@code M x K}
 * and B is given as its {@code N} rows of length {@code K}, both row-major in Jlama's
 * {@link FloatBufferTensor} (64-byte aligned direct memory). So
 * <ul>
 *   <li>{@code square}: {@code size x size x size}, A and B the same values as in
 *       {@link GemmBenchmark}, B handed to Jlama transposed (its rows are B's columns);</li>
 *   <li>{@code projection}: the fused Q/K/V projection {@code (L x 512) * (512 x 1536)}, the
 *       weight W {@code (1536, 512)} as {@code nn.Linear} keeps it, which is exactly Jlama's B
 *       layout: Jlama's natural case, comparable to attn4j's {@code projectionUnpacked} (weight
 *       read as it is) and {@code projectionPacked} (weight packed once beforehand).</li>
 * </ul>
 * Jlama packs nothing, so there is no packed/unpacked pair on its side. Every {@link Setup} checks
 * Jlama's product against attn4j's {@link Gemm} on the benchmark shape before timing
 * ({@link #checkAgainstGemm}). Jlama's kernels need K to be a multiple of the vector length
 * (16 floats with AVX-512); at the benchmark shapes M and N are multiples of its register tiles
 * as well.
 *
 * <p>Run both sides with GFLOP/s printed: {@code java --add-modules jdk.incubator.vector -cp
 * target/benchmarks.jar io.github.attn4j.jmh.JlamaGemmBenchmark -f 1 -p size=512}, or JMH alone:
 * {@code java -jar target/benchmarks.jar JlamaGemmBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s}. The
 * fork allows {@code sun.misc.Unsafe}, which Jlama's aligned buffer allocation calls (JDK 24+
 * warns about it otherwise). Five warm-up iterations: in smoke runs Jlama's code reached its
 * steady speed only after two to three seconds.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "--sun-misc-unsafe-memory-access=allow"})
public class JlamaGemmBenchmark {
    /** Square operands. */
    @State(Scope.Thread)
    public static class Square {
        /** Side of the square matrices. */
        @Param({"512", "2048"})
        public int size;

        PanamaTensorOperations ops;
        FloatBufferTensor a;
        FloatBufferTensor bRows;
        FloatBufferTensor c;

        /** The operands of {@link GemmBenchmark.Square}, B transposed into Jlama's row layout; checks one product. */
        @Setup
        public void setup() {
            float[] aData = GemmBenchmark.random(size * size, 1);
            float[] bData = GemmBenchmark.random(size * size, 2);
            float[] bTransposed = new float[size * size];
            for (int k = 0; k < size; k++) {
                for (int j = 0; j < size; j++) {
                    bTransposed[j * size + k] = bData[k * size + j];
                }
            }
            ops = new PanamaTensorOperations(MachineSpec.VECTOR_TYPE);
            a = tensor(aData, size, size);
            bRows = tensor(bTransposed, size, size);
            c = new FloatBufferTensor(size, size);
            ops.batchDotProduct(c, a, bRows, 0, 0, size);
            checkAgainstGemm(aData, bTransposed, size, size, size, c);
        }
    }

    /** Projection operands: activations {@code L x 512}, weight {@code (1536, 512)} row-major. */
    @State(Scope.Thread)
    public static class Projection {
        /** Sequence length L (rows of the activations). */
        @Param({"512"})
        public int seqLen;

        PanamaTensorOperations ops;
        FloatBufferTensor x;
        FloatBufferTensor w;
        FloatBufferTensor y;

        /** The operands of {@link GemmBenchmark.Projection}; checks one product. */
        @Setup
        public void setup() {
            float[] xData = GemmBenchmark.random(seqLen * GemmBenchmark.D_MODEL, 3);
            float[] wData = GemmBenchmark.random(GemmBenchmark.QKV * GemmBenchmark.D_MODEL, 4);
            ops = new PanamaTensorOperations(MachineSpec.VECTOR_TYPE);
            x = tensor(xData, seqLen, GemmBenchmark.D_MODEL);
            w = tensor(wData, GemmBenchmark.QKV, GemmBenchmark.D_MODEL);
            y = new FloatBufferTensor(seqLen, GemmBenchmark.QKV);
            ops.batchDotProduct(y, x, w, 0, 0, GemmBenchmark.D_MODEL);
            checkAgainstGemm(xData, wData, seqLen, GemmBenchmark.QKV, GemmBenchmark.D_MODEL, y);
        }
    }

    /** {@code size^3}: {@code C = A * B} with B given as rows of {@code B^T}. */
    @Benchmark
    public FloatBufferTensor square(Square s) {
        s.ops.batchDotProduct(s.c, s.a, s.bRows, 0, 0, s.size);
        return s.c;
    }

    /** {@code (L x 512) * (512 x 1536)}: {@code Y = X * W^T} with W as {@code nn.Linear} stores it. */
    @Benchmark
    public FloatBufferTensor projection(Projection p) {
        p.ops.batchDotProduct(p.y, p.x, p.w, 0, 0, GemmBenchmark.D_MODEL);
        return p.y;
    }

    /** A Jlama tensor of the given shape holding {@code data} row-major. */
    static FloatBufferTensor tensor(float[] data, int rows, int cols) {
        FloatBufferTensor t = new FloatBufferTensor(rows, cols);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                t.set(data[i * cols + j], i, j);
            }
        }
        return t;
    }

    /**
     * Checks Jlama's {@code c = a * bRows^T} against attn4j's {@link Gemm} on the same operands.
     * Each of the two float results lies within {@code gamma_K * sum_k |a_ik| |b_jk|} of the exact
     * product ({@code gamma_K = K u / (1 - K u)}, {@code u = 2^-24}), whatever the summation order,
     * so they may differ by twice that; the sums of absolute products come from a third GEMM on
     * {@code |a|} and {@code |b|}.
     *
     * @param a     {@code m x k} row-major
     * @param bRows {@code n x k} row-major (the rows of B^T, as Jlama takes them)
     * @param c     Jlama's {@code m x n} result
     * @throws IllegalStateException naming the first element out of bounds
     */
    static void checkAgainstGemm(float[] a, float[] bRows, int m, int n, int k, FloatBufferTensor c) {
        float[] expected = new float[m * n];
        Gemm.multiply(MatrixView.rowMajor(a, m, k), MatrixView.rowMajor(bRows, n, k).transpose(), expected, 0, n, false);
        float[] absA = abs(a);
        float[] absB = abs(bRows);
        float[] magnitude = new float[m * n];
        Gemm.multiply(MatrixView.rowMajor(absA, m, k), MatrixView.rowMajor(absB, n, k).transpose(), magnitude, 0, n, false);
        double ku = k * 0x1p-24;
        double factor = 2 * ku / (1 - ku) * (1 + 2 * ku);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double jlama = c.get(i, j);
                double attn4j = expected[i * n + j];
                double bound = factor * magnitude[i * n + j] + Float.MIN_NORMAL;
                if (!(Math.abs(jlama - attn4j) <= bound)) {
                    throw new IllegalStateException(String.format(Locale.ROOT,
                            "Jlama batchDotProduct (%d x %d x %d): C[%d][%d] = %s, attn4j Gemm gives %s (allowed difference %.3g)",
                            m, n, k, i, j, jlama, attn4j, bound));
                }
            }
        }
    }

    private static float[] abs(float[] data) {
        float[] out = new float[data.length];
        for (int i = 0; i < data.length; i++) {
            out[i] = Math.abs(data[i]);
        }
        return out;
    }

    /**
     * Runs this class and {@link GemmBenchmark} with JMH command-line options (e.g.
     * {@code -f 1 -wi 3 -i 5 -p size=512}) and prints every result's GFLOP/s, attn4j and Jlama
     * side by side.
     */
    public static void main(String[] args) throws RunnerException, CommandLineOptionException {
        GemmBenchmark.runAndPrint(args, GemmBenchmark.class, JlamaGemmBenchmark.class);
    }
}
