package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Tensor;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The cost of reading inputs from a native {@link MemorySegment} instead of a {@code float[]}:
 * causal self-attention (E = 512, 8 heads, one thread) on the same values held both ways.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx2g"})
public class SegmentInputBenchmark {
    @Param({"128", "2048"})
    public int seqLen;

    private MultiHeadAttention module;
    private Tensor onHeap;
    private Tensor offHeap;
    private Arena arena;

    @Setup
    public void setUp() {
        module = MultiHeadAttention.builder(512, 8).seed(1).threads(1).build();
        onHeap = Inputs.uniform(new SplittableRandom(2), 1, seqLen, 512);
        arena = Arena.ofShared();
        MemorySegment s = arena.allocate(4L * onHeap.size(), 64);
        MemorySegment.copy(onHeap.toArray(), 0, s, ValueLayout.JAVA_FLOAT, 0, onHeap.size());
        offHeap = Tensor.of(s, 1, seqLen, 512);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public Tensor floatArray() {
        return module.forward(onHeap, AttentionMask.causal());
    }

    @Benchmark
    public Tensor nativeSegment() {
        return module.forward(offHeap, AttentionMask.causal());
    }
}
