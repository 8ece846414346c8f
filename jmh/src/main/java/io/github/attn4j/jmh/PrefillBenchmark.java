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

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/** Prefill of a prompt through {@code forwardCached} (fresh cache) against {@code forward(x, causal())} on the same tokens. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class PrefillBenchmark {
    @Param({"512", "2048"})
    public int seqLen;

    private MultiHeadAttention module;
    private Tensor x;

    @Setup
    public void setUp() {
        module = MultiHeadAttention.builder(512, 8).seed(1).threads(1).build();
        x = Inputs.uniform(new SplittableRandom(3), 1, seqLen, 512);
    }

    @Benchmark
    public Tensor forwardCausal() {
        return module.forward(x, AttentionMask.causal());
    }

    @Benchmark
    public Tensor forwardCached() {
        return module.forwardCached(x, module.newKvCache(1, seqLen));
    }
}
