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
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Self-attention {@code MultiHeadAttention.forward(x, mask)} over {@code x (batch, seqLen, embedDim)}
 * ({@link #forward}), and {@code forward(x, mask, out)} into a tensor allocated once, over a
 * {@code float[]} ({@link #forwardInto}) or a native segment ({@link #forwardIntoSegment}), whose
 * {@code -prof gc} figure {@code gc.alloc.rate.norm} is what a steady-state call allocates. Effective GFLOP/s = {@link Flops#attention}(batch, seqLen, embedDim) / time: the projections'
 * {@code 8·B·L·E²} plus the attention's {@code 4·B·L²·E}, whatever the mask skips.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class MultiHeadAttentionBenchmark {
    @Param({"1", "8", "16"})
    public int numHeads;

    @Param({"128", "512", "2048"})
    public int seqLen;

    /** {@code none}, {@code causal}, or {@code padding}: a key padding mask over the last quarter of keys. */
    @Param({"none", "causal", "padding"})
    public String mask;

    @Param({"512"})
    public int embedDim;

    @Param({"1"})
    public int batch;

    @Param({"1"})
    public int threads;

    private MultiHeadAttention module;
    private Tensor x;
    private AttentionMask attentionMask;
    private Tensor out;
    private Tensor segmentOut;

    @Setup
    public void setUp() {
        module = MultiHeadAttention.builder(embedDim, numHeads).seed(42).threads(threads).build();
        x = Inputs.uniform(new SplittableRandom(7), batch, seqLen, embedDim);
        attentionMask = Inputs.mask(mask, batch, seqLen);
        out = Tensor.zeros(batch, seqLen, embedDim);
        segmentOut = Tensor.of(Arena.ofAuto().allocate(4L * out.size(), 64), batch, seqLen, embedDim);
    }

    @Benchmark
    public Tensor forward() {
        return module.forward(x, attentionMask);
    }

    @Benchmark
    public Tensor forwardInto() {
        return module.forward(x, attentionMask, out);
    }

    @Benchmark
    public Tensor forwardIntoSegment() {
        return module.forward(x, attentionMask, segmentOut);
    }
}
