package io.github.attn4j.jmh;

import io.github.attn4j.KvCache;
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

/**
 * One decode step ({@code forwardCached} of {@code tokens} new tokens, 1 by default; a few for
 * speculative decoding's verification step) over a cache of {@code cacheLength} tokens: 32 query
 * heads of 128 sharing 8 key/value heads. Each step streams
 * {@code 2 · cacheLength · 8 · 128 · 4} bytes of keys and values (4, 32 and 128 MiB at 512, 4096
 * and 16384 tokens).
 *
 * <p>With {@code embedDim = 4096} it also streams the four projection weights
 * ({@code 4096 · (4096 + 2 · 1024 + 4096) · 4} bytes, 168 MB), which dominate below tens of
 * thousands of cached tokens. With {@code embedDim = 64} (head width still 128) the projections
 * are 2.6 MB and the step is the attention over the cache: compare its K+V bytes per second with
 * {@link MemoryBandwidthBenchmark} at the same size and thread count.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx6g"})
public class DecodeBenchmark {
    @Param({"512", "4096", "16384"})
    public int cacheLength;

    @Param({"1", "2"})
    public int threads;

    @Param({"4096", "64"})
    public int embedDim;

    @Param({"1"})
    public int tokens;

    private MultiHeadAttention module;
    private KvCache cache;
    private Tensor token;

    @Setup
    public void setUp() {
        module = MultiHeadAttention.builder(embedDim, 32).headDim(128).kvHeads(8).seed(1).threads(threads).build();
        SplittableRandom random = new SplittableRandom(2);
        cache = module.newKvCache(1, cacheLength + tokens);
        int chunk = 512;
        for (int done = 0; done < cacheLength; done += chunk) {
            module.forwardCached(Inputs.uniform(random, 1, Math.min(chunk, cacheLength - done), embedDim), cache);
        }
        token = Inputs.uniform(random, 1, tokens, embedDim);
    }

    @Benchmark
    public Tensor step() {
        cache.truncate(cacheLength);
        return module.forwardCached(token, cache);
    }
}
