package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.KvCache;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Precision;
import io.github.attn4j.RotaryEmbedding;
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
 * One attention layer shaped like Llama 3 8B: {@code E = 4096}, 32 query heads of 128 sharing 8
 * key/value heads, no biases, RoPE with theta 500000 and Llama 3.1 frequency scaling (factor 8,
 * low/high frequency factors 1 and 4, 8192 original positions), random weights.
 *
 * <ul>
 *   <li>{@link #prefill}: {@code forward(x (1, seqLen, 4096), causal())}, timed one call at a time
 *       ({@link Mode#SingleShotTime}). Effective GFLOP/s = {@link #prefillFlops}(seqLen) / time:
 *       the projections' {@code 2·L·E·(H·hd + 2·KVH·hd) + 2·L·H·hd·E = 2·L·4096·10240} plus the
 *       attention's {@code 4·L²·H·hd}, counted whole whatever the causal mask skips (as
 *       {@link Flops#attention} does), so about 47 GFLOP at L = 512 and 241 GFLOP at L = 2048.</li>
 *   <li>{@link #decode}: one decode step ({@code forwardCached} of one token) over a cache holding
 *       {@code cacheLength} tokens, cut back to {@code cacheLength} after the step. The cache is
 *       filled in setup by {@code cache.append} of random keys and values, not by prefill (the
 *       values do not change the speed). Bytes per second = {@link #decodeBytes}(cacheLength) /
 *       time: the four projection weights ({@code 4·4096·10240} bytes, 168 MB) plus the cached
 *       keys and values ({@code 2·cacheLength·8·128·4} bytes, 32 and 128 MiB at 4096 and 16384
 *       tokens); compare with {@link MemoryBandwidthBenchmark}. Both counts are for F32 weights
 *       and cache; BF16 halves each part. With {@code conversations > 1} the step decodes one token
 *       of each of that many conversations (cache rows) in one call: the weights are read once
 *       and each conversation's {@code cacheLength} cached tokens once.</li>
 * </ul>
 *
 * <p>{@code weightPrecision} (both benchmarks) stores the projection weights as F32 or BF16
 * ({@code MultiHeadAttentionBuilder.weightPrecision}; {@code -p weightPrecision=F16} runs F16
 * weights too); {@code cachePrecision} (decode) is the precision of the cache the step reads.
 *
 * <p>Expected times, from short runs on one thread of a shared 2-core AVX2 machine (load average
 * about 9, so on an idle core expect less): prefill at L = 512 took 1.35 and 1.57 s per warmed
 * shot (about 35 GFLOP/s); L = 2048 has 5.1 times the flops, so expect 5 to 8 s per shot (not
 * run). A decode step over 4096 cached tokens took about 21 ms (9.6 GB/s of weights and cache).
 * The first, cold call is much slower (1.5 s for a decode step, 8 s for the L = 512 prefill:
 * the Vector API code runs interpreted until compiled), so keep at least one warm-up shot.
 *
 * <p>Full run: {@code java -jar target/benchmarks.jar LlamaLayerBenchmark -f 1}
 * (prefill: 2 warm-up shots and 5 measured shots per size; decode: 3 + 5 one-second iterations).
 */
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class LlamaLayerBenchmark {
    static final int EMBED_DIM = 4096;
    static final int HEADS = 32;
    static final int KV_HEADS = 8;
    static final int HEAD_DIM = 128;

    /** The Llama-3-8B-shaped module (random weights from a fixed seed) on {@code threads} threads, weights stored as {@code weights}. */
    static MultiHeadAttention llama(int threads, Precision weights) {
        return MultiHeadAttention.builder(EMBED_DIM, HEADS)
                .kvHeads(KV_HEADS)
                .headDim(HEAD_DIM)
                .bias(false)
                .rotary(RotaryEmbedding.of(HEAD_DIM, 500000).llama3Scaling(8, 1, 4, 8192))
                .seed(1)
                .threads(threads)
                .weightPrecision(weights)
                .build();
    }

    /** Floating-point operations of a prefill of {@code seqLen} tokens, whatever the mask skips. */
    public static double prefillFlops(long seqLen) {
        long qWidth = (long) HEADS * HEAD_DIM;
        long kvWidth = (long) KV_HEADS * HEAD_DIM;
        double projections = 2.0 * seqLen * EMBED_DIM * (qWidth + 2 * kvWidth) + 2.0 * seqLen * qWidth * EMBED_DIM;
        return projections + 4.0 * seqLen * seqLen * qWidth;
    }

    /** Bytes one decode step over {@code cacheLength} cached tokens must read: weights plus cached K and V. */
    public static double decodeBytes(long cacheLength) {
        long qWidth = (long) HEADS * HEAD_DIM;
        long kvWidth = (long) KV_HEADS * HEAD_DIM;
        double weights = 4.0 * EMBED_DIM * (2 * qWidth + 2 * kvWidth);
        return weights + 2.0 * 4 * cacheLength * kvWidth;
    }

    @State(Scope.Benchmark)
    public static class Prefill {
        @Param({"512", "2048"})
        public int seqLen;

        @Param({"1", "2"})
        public int threads;

        @Param({"F32", "BF16"})
        public Precision weightPrecision;

        MultiHeadAttention module;
        Tensor x;

        @Setup
        public void setUp() {
            module = llama(threads, weightPrecision);
            x = Inputs.uniform(new SplittableRandom(3), 1, seqLen, EMBED_DIM);
        }
    }

    @State(Scope.Benchmark)
    public static class Decode {
        @Param({"4096", "16384"})
        public int cacheLength;

        @Param({"1", "2"})
        public int threads;

        @Param({"F32", "BF16"})
        public Precision weightPrecision;

        @Param({"F32", "BF16"})
        public Precision cachePrecision;

        /** Conversations decoded in one call, one token each (the projections then have that many rows). */
        @Param({"1"})
        public int conversations;

        MultiHeadAttention module;
        KvCache cache;
        Tensor token;

        @Setup
        public void setUp() {
            module = llama(threads, weightPrecision);
            cache = module.newKvCache(conversations, cacheLength + 1, cachePrecision);
            SplittableRandom random = new SplittableRandom(5);
            int[] lengths = new int[conversations];
            java.util.Arrays.fill(lengths, cacheLength);
            CacheFill.fill(cache, lengths, random);
            token = Inputs.uniform(random, conversations, 1, EMBED_DIM);
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 2)
    @Measurement(iterations = 5)
    public Tensor prefill(Prefill s) {
        return s.module.forward(s.x, AttentionMask.causal());
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    @Warmup(iterations = 3, time = 1)
    @Measurement(iterations = 5, time = 1)
    public Tensor decode(Decode s) {
        Tensor out = s.module.forwardCached(s.token, s.cache);
        s.cache.truncate(s.cacheLength);
        return out;
    }
}
