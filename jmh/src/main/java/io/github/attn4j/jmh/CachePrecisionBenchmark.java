package io.github.attn4j.jmh;

import io.github.attn4j.KvCache;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Precision;
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
 * {@link DecodeBenchmark}'s attention-bound decode step (one new token, 32 query heads of 128
 * over 8 key/value heads, {@code embedDim = 64}, so the projections are 2.6 MB) over caches of
 * each {@link Precision}; {@code -p kvHeads=32} makes it plain multi-head attention (a cache four
 * times as large, one query row per key/value head), {@code -p kvHeads=16} gives two query rows
 * per key/value head (Gemma 2 and 3), {@code -p headDim=96} heads of 96 (Phi-3-mini), and
 * {@code -p conversations=32} 32 conversations of {@code cacheLength} tokens each, one new token
 * per conversation in one call (continuous batching of many chats). A step streams the cache
 * once: {@code 2 · cacheLength · 8 · 128} values
 * of 4 (F32), 2 (F16, BF16) or 1.125 (INT8: a float scale per 32 values) bytes, that is 32, 16
 * and 9 MiB at 4096 tokens, 128, 64 and 36 MiB at 16384. Compare the step time with F32's and its
 * bytes per second with {@link MemoryBandwidthBenchmark} at the same size
 * ({@code -p mebibytes=9,16,32,36,64,128}) and thread count.
 *
 * <p>Before 0.2.0's decode-step products the narrow caches were not faster than F32 (F16 1.19 to
 * 1.81x, BF16 0.97 to 1.84x, INT8 0.82 to 1.03x): each key and value tile was widened into
 * float32 scratch before the micro-kernel read it, a pass that cost about what the smaller reads
 * saved. A decode step's products now widen the stored panels in registers; figures and the
 * command in {@code jmh/README.md}, section "KV cache precision".
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx6g"})
public class CachePrecisionBenchmark {
    @Param({"F32", "F16", "BF16", "INT8"})
    public Precision precision;

    @Param({"4096", "16384"})
    public int cacheLength;

    @Param({"1", "2"})
    public int threads;

    /** Key/value heads: 8 (grouped-query attention, four query rows per head), 16 (two) or 32 (plain multi-head attention, one). */
    @Param({"8"})
    public int kvHeads;

    /** Width of every head. */
    @Param({"128"})
    public int headDim;

    /** Conversations decoded by one call: the cache's batch, each row holding {@code cacheLength} tokens. */
    @Param({"1"})
    public int conversations;

    private MultiHeadAttention module;
    private KvCache cache;
    private Tensor token;

    @Setup
    public void setUp() {
        int embedDim = 64;
        module = MultiHeadAttention.builder(embedDim, 32).headDim(headDim).kvHeads(kvHeads).seed(1).threads(threads).build();
        SplittableRandom random = new SplittableRandom(2);
        cache = module.newKvCache(conversations, cacheLength + 1, precision);
        // Keys and values appended directly (uniform in [-1, 1)), not projected from a prompt run
        // through the module: the step costs the same for any finite cache, and a prompt of 16384
        // tokens took about a minute per fork.
        cache.append(Inputs.uniform(random, conversations, kvHeads, cacheLength, headDim),
                Inputs.uniform(random, conversations, kvHeads, cacheLength, headDim));
        token = Inputs.uniform(random, conversations, 1, embedDim);
    }

    @Benchmark
    public Tensor step() {
        cache.truncate(cacheLength);
        return module.forwardCached(token, cache);
    }
}
