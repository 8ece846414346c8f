package io.github.attn4j.jmh;

import java.util.concurrent.TimeUnit;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The single-core Vector API FMA ceiling as the GEMM micro-kernel sees it: 12 independent
 * accumulator chains on {@link FloatVector#SPECIES_PREFERRED} vectors (the micro-kernel's 6 x 2
 * register block), each updated {@link #STEPS} times.
 *
 * <p>The score is in vector FMAs per nanosecond ({@link OperationsPerInvocation} counts one
 * operation per vector FMA). One vector FMA is {@code 2 * LANES} floating-point operations, so
 * <pre>GFLOP/s = score * 2 * LANES</pre>
 * which is {@code score * 32} with 16-lane AVX-512 vectors. {@link #gflops(double)} does the
 * conversion for the running machine.
 *
 * <p>Run: {@code java -jar target/benchmarks.jar FmaPeakBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class FmaPeakBenchmark {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    /** FMA steps per chain per invocation. */
    static final int STEPS = 1 << 16;
    /** Independent accumulator chains, as in the 6 x 2-vector micro-kernel. */
    static final int CHAINS = 12;

    private float[] seeds;
    private float scale;

    /** Converts this benchmark's score (vector FMAs per ns) into GFLOP/s on this machine. */
    public static double gflops(double fmasPerNs) {
        return fmasPerNs * 2 * S.length();
    }

    /** Fills the seeds and multiplier; the sums stay below 3000, far from overflow. */
    @Setup
    public void setup() {
        seeds = new float[2 * S.length()];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 1e-3f * (i + 1);
        }
        scale = 0.999f;
    }

    /** Runs {@code CHAINS} independent FMA chains of {@code STEPS} steps each. */
    @Benchmark
    @OperationsPerInvocation(STEPS * CHAINS)
    public float fma12() {
        FloatVector b0 = FloatVector.fromArray(S, seeds, 0);
        FloatVector b1 = FloatVector.fromArray(S, seeds, S.length());
        FloatVector a = FloatVector.broadcast(S, scale);
        FloatVector c00 = b0, c01 = b1, c10 = b0, c11 = b1, c20 = b0, c21 = b1;
        FloatVector c30 = b0, c31 = b1, c40 = b0, c41 = b1, c50 = b0, c51 = b1;
        // c += a * b, as in the micro-kernel: each chain depends on its accumulator only.
        for (int s = 0; s < STEPS; s++) {
            c00 = a.fma(b0, c00);
            c01 = a.fma(b1, c01);
            c10 = a.fma(b0, c10);
            c11 = a.fma(b1, c11);
            c20 = a.fma(b0, c20);
            c21 = a.fma(b1, c21);
            c30 = a.fma(b0, c30);
            c31 = a.fma(b1, c31);
            c40 = a.fma(b0, c40);
            c41 = a.fma(b1, c41);
            c50 = a.fma(b0, c50);
            c51 = a.fma(b1, c51);
        }
        FloatVector sum = c00.add(c01).add(c10).add(c11).add(c20).add(c21)
                .add(c30).add(c31).add(c40).add(c41).add(c50).add(c51);
        return sum.reduceLanes(VectorOperators.ADD);
    }
}
