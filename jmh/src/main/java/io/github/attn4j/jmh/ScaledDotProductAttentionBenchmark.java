package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.ScaledDotProductAttention;
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

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The attention part alone (scores, softmax, weighted values) on projected heads
 * {@code (1, heads, seqLen, headDim)}: {@code 4·L²·H·hd} flops, whatever the mask skips.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class ScaledDotProductAttentionBenchmark {
    @Param({"8"})
    public int heads;

    @Param({"64"})
    public int headDim;

    @Param({"512", "2048"})
    public int seqLen;

    @Param({"none", "causal", "padding"})
    public String mask;

    @Param({"1"})
    public int threads;

    private Tensor q;
    private Tensor k;
    private Tensor v;
    private AttentionMask attentionMask;

    @Setup
    public void setUp() {
        SplittableRandom random = new SplittableRandom(11);
        q = Inputs.uniform(random, 1, heads, seqLen, headDim);
        k = Inputs.uniform(random, 1, heads, seqLen, headDim);
        v = Inputs.uniform(random, 1, heads, seqLen, headDim);
        attentionMask = Inputs.mask(mask, 1, seqLen);
    }

    Tensor q() {
        return q;
    }

    Tensor k() {
        return k;
    }

    Tensor v() {
        return v;
    }

    @Benchmark
    public Tensor attention() {
        return ScaledDotProductAttention.apply(q, k, v, attentionMask, (float) (1 / Math.sqrt(headDim)), threads);
    }
}
