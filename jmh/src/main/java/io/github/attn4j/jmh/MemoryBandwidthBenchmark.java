package io.github.attn4j.jmh;

import io.github.attn4j.internal.kernel.Parallel;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
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

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * The read bandwidth a decode step can hope for: one pass summing {@code mebibytes} MiB of floats
 * with four independent vector accumulators, split into 64 KiB chunks over {@code threads}
 * threads on attn4j's own pool (as the decode step splits its keys). Bytes per second is
 * {@code mebibytes · 2²⁰ / time}. Sizes match the K+V bytes of {@link DecodeBenchmark}'s
 * cache lengths 512, 4096 and 16384 (4, 32 and 128 MiB), so 4 MiB measures L3 and 128 MiB DRAM.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx2g"})
public class MemoryBandwidthBenchmark {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int CHUNK = 16384;

    @Param({"4", "32", "128"})
    public int mebibytes;

    @Param({"1", "2"})
    public int threads;

    private float[] data;
    private float[] partial;

    @Setup
    public void setUp() {
        data = new float[mebibytes << 18];
        Arrays.fill(data, 1f);
        partial = new float[data.length / CHUNK];
    }

    @Benchmark
    public float read() {
        Parallel.forEach(threads, partial.length, (chunk, worker) -> partial[chunk] = sum(data, chunk * CHUNK));
        float total = 0;
        for (float p : partial) {
            total += p;
        }
        return total;
    }

    private static float sum(float[] a, int from) {
        int l = S.length();
        FloatVector s0 = FloatVector.zero(S), s1 = FloatVector.zero(S), s2 = FloatVector.zero(S), s3 = FloatVector.zero(S);
        for (int i = from; i < from + CHUNK; i += 4 * l) {
            s0 = s0.add(FloatVector.fromArray(S, a, i));
            s1 = s1.add(FloatVector.fromArray(S, a, i + l));
            s2 = s2.add(FloatVector.fromArray(S, a, i + 2 * l));
            s3 = s3.add(FloatVector.fromArray(S, a, i + 3 * l));
        }
        return s0.add(s1).add(s2.add(s3)).reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }
}
