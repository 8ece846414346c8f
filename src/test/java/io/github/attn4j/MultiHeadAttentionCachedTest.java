package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * {@link MultiHeadAttention#forwardCached} with masks, ragged rows and the per-head options
 * (RoPE, QK-norm, soft-cap, sinks), through identities that hold by definition: decoding in
 * chunks equals the full pass, a ragged batch equals its rows decoded alone, and the thread count
 * changes no bit.
 */
class MultiHeadAttentionCachedTest {
    /** (embedDim, numHeads, kvHeads): head widths 8 and 32, MHA, GQA and MQA. */
    private static final int[][] CONFIGS = {{32, 4, 4}, {48, 6, 2}, {64, 8, 1}, {64, 2, 2}, {96, 3, 1}};

    /** A module of a random config with each per-head option on or off at random. */
    static MultiHeadAttention decoder(SplittableRandom random, int[] config, int threads) {
        int e = config[0], h = config[1], hd = e / h;
        MultiHeadAttentionBuilder b = MultiHeadAttention.builder(e, h).kvHeads(config[2]).seed(random.nextLong())
                .threads(threads);
        if (random.nextBoolean()) {
            b.rotary(RotaryEmbedding.of(random.nextBoolean() ? hd : hd / 2, 10000));
        }
        if (random.nextBoolean()) {
            b.qkNorm(normWeights(random, hd), normWeights(random, hd), 1e-6f);
        }
        if (random.nextBoolean()) {
            b.softcap((float) random.nextDouble(0.5, 20));
        }
        if (random.nextBoolean()) {
            b.sinks(RandomTensors.uniformArray(random, h, 2));
        }
        return b.build();
    }

    /** None, a sliding window, ALiBi, or both; each is joined to the causal mask by forwardCached. */
    private static AttentionMask mask(SplittableRandom random, int heads) {
        AttentionMask window = AttentionMask.slidingWindow(1 + random.nextInt(20));
        AttentionMask alibi = AttentionMask.alibi(AttentionMask.alibiSlopes(heads));
        return switch (random.nextInt(4)) {
            case 0 -> AttentionMask.none();
            case 1 -> window;
            case 2 -> alibi;
            default -> window.and(alibi);
        };
    }

    @Test
    void chunkedDecodingWithAMaskEqualsTheFullPass() {
        qt().withExamples(40).forAll(integers().between(1, 120), integers().between(0, CONFIGS.length - 1), longs().all())
                .checkAssert((length, config, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    int e = CONFIGS[config][0], batch = 1 + random.nextInt(3);
                    MultiHeadAttention m = decoder(random, CONFIGS[config], 1 + random.nextInt(2));
                    AttentionMask mask = mask(random, m.numHeads());
                    Tensor x = uniform(random, batch, length, e);
                    float[] full = m.forward(x, AttentionMask.causal().and(mask)).toArray();

                    KvCache cache = m.newKvCache(batch, random.nextInt(4));
                    float[] chunked = new float[full.length];
                    for (int done = 0; done < length; ) {
                        int t = Math.min(length - done, random.nextInt(4) == 0 ? 1 + random.nextInt(40) : 1);
                        float[] y = m.forwardCached(tokens(x, done, t), cache, mask).toArray();
                        for (int b = 0; b < batch; b++) {
                            System.arraycopy(y, b * t * e, chunked, (b * length + done) * e, t * e);
                        }
                        done += t;
                        assertEquals(done, cache.length());
                    }
                    Tolerance.assertClose(full, chunked, 2 * e + length + Tolerance.maskBiasTerms(mask, length, length), "config " + config + " L=" + length + " " + mask);
                });
    }

    @Test
    void eachRowOfARaggedBatchEqualsThatRowDecodedAlone() {
        qt().withExamples(30).forAll(integers().between(0, CONFIGS.length - 1), longs().all()).checkAssert((config, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            int e = CONFIGS[config][0], batch = 2 + random.nextInt(3);
            MultiHeadAttention m = decoder(random, CONFIGS[config], 1 + random.nextInt(2));
            AttentionMask mask = mask(random, m.numHeads());
            KvCache cache = m.newKvCache(batch, random.nextInt(3));
            KvCache[] alone = new KvCache[batch];
            for (int b = 0; b < batch; b++) {
                alone[b] = m.newKvCache(1, 0);
            }
            for (int step = 0; step < 6; step++) {
                int t = 1 + random.nextInt(step == 0 ? 30 : 5);
                int[] tokens = new int[batch];
                for (int b = 0; b < batch; b++) {
                    tokens[b] = random.nextInt(3) == 0 ? 0 : random.nextInt(t + 1);
                }
                Tensor x = uniform(random, batch, t, e);
                float[] y = m.forwardCached(x, cache, mask, tokens).toArray();
                for (int b = 0; b < batch; b++) {
                    String what = "config " + config + " step " + step + " row " + b + " tokens " + Arrays.toString(tokens) + " " + mask;
                    float[] row = Arrays.copyOfRange(y, b * t * e, (b + 1) * t * e);
                    float[] own = m.forwardCached(tokens(row(x, b), 0, tokens[b]), alone[b], mask).toArray();
                    Tolerance.assertClose(own, Arrays.copyOf(row, tokens[b] * e),
                            2 * e + cache.length(b) + Tolerance.maskBiasTerms(mask, tokens[b], cache.length(b)), what);
                    assertArrayEquals(new float[(t - tokens[b]) * e], Arrays.copyOfRange(row, tokens[b] * e, t * e), 0f, what);
                    assertEquals(alone[b].length(0), cache.length(b), what);
                }
            }
        });
    }

    @Test
    void aRowWithNoTokensSitsOut() {
        MultiHeadAttention m = MultiHeadAttention.builder(32, 4).kvHeads(2).seed(3).rotary(RotaryEmbedding.of(8, 10000)).build();
        SplittableRandom random = new SplittableRandom(4);
        KvCache cache = m.newKvCache(2, 4);
        m.forwardCached(uniform(random, 2, 3, 32), cache);
        Tensor x = uniform(random, 2, 2, 32);
        float[] y = m.forwardCached(x, cache, AttentionMask.none(), new int[]{2, 0}).toArray();
        assertEquals(5, cache.length(0));
        assertEquals(3, cache.length(1));
        assertArrayEquals(new float[2 * 32], Arrays.copyOfRange(y, 2 * 32, 4 * 32), 0f);
        // Row 1 goes on as if the call had not happened: its next token sits at position 3.
        KvCache replay = m.newKvCache(2, 4);
        random = new SplittableRandom(4);
        m.forwardCached(uniform(random, 2, 3, 32), replay);
        Tensor next = uniform(new SplittableRandom(5), 2, 1, 32);
        float[] expected = m.forwardCached(next, replay, AttentionMask.none(), new int[]{0, 1}).toArray();
        float[] actual = m.forwardCached(next, cache, AttentionMask.none(), new int[]{0, 1}).toArray();
        Tolerance.assertClose(Arrays.copyOfRange(expected, 32, 64), Arrays.copyOfRange(actual, 32, 64), 2 * 32 + 4, "row 1");
    }

    @Test
    void aStandaloneCacheOfTheSameShapeWorksLikeTheModulesOwn() {
        MultiHeadAttention m = MultiHeadAttention.builder(48, 6).kvHeads(2).seed(8).build();
        SplittableRandom random = new SplittableRandom(9);
        Tensor first = uniform(random, 2, 5, 48), second = uniform(random, 2, 2, 48);
        KvCache own = m.newKvCache(2, 1), standalone = KvCache.create(2, 2, 8, 1);
        assertArrayEquals(m.forwardCached(first, own).toArray(), m.forwardCached(first, standalone).toArray(), 0f);
        assertArrayEquals(m.forwardCached(second, own).toArray(), m.forwardCached(second, standalone).toArray(), 0f);
    }

    @Test
    void everyEntryPointIsBitIdenticalForOneTwoAndThreeThreads() {
        qt().withExamples(15).forAll(integers().between(0, CONFIGS.length - 1), longs().all()).checkAssert((config, seed) -> {
            float[][] expected = null;
            for (int threads = 1; threads <= 3; threads++) {
                SplittableRandom random = new SplittableRandom(seed);
                int e = CONFIGS[config][0], batch = 1 + random.nextInt(3);
                MultiHeadAttention m = decoder(random, CONFIGS[config], threads);
                AttentionMask mask = mask(random, m.numHeads());
                Tensor x = uniform(random, batch, 1 + random.nextInt(150), e);
                Tensor kv = uniform(random, batch, 1 + random.nextInt(150), e);
                AttentionOutput cross = m.forwardWithWeights(x, kv, kv, mask);
                KvCache cache = m.newKvCache(batch, 0);
                Tensor prefill = m.forwardCached(x, cache, mask);
                int[] tokens = new int[batch];
                Arrays.setAll(tokens, b -> b % 3);
                float[][] all = {m.forward(x, AttentionMask.causal().and(mask)).toArray(), m.forward(x, kv, kv, mask).toArray(),
                        cross.output().toArray(), cross.weights().toArray(), prefill.toArray(),
                        m.forwardCached(uniform(random, batch, 2, e), cache, mask, tokens).toArray()};
                if (expected == null) {
                    expected = all;
                } else {
                    assertArrayEquals(expected, all, threads + " threads, config " + config);
                }
            }
        });
    }

    /** Tokens {@code [from, from + count)} of every batch row of {@code x (B, L, E)}. */
    static Tensor tokens(Tensor x, int from, int count) {
        int batch = x.dim(0), length = x.dim(1), e = x.dim(2);
        float[] xs = x.toArray(), out = new float[batch * count * e];
        for (int b = 0; b < batch; b++) {
            System.arraycopy(xs, (b * length + from) * e, out, b * count * e, count * e);
        }
        return Tensor.of(out, batch, count, e);
    }

    /** Batch row {@code b} of {@code x (B, L, E)} as {@code (1, L, E)}. */
    private static Tensor row(Tensor x, int b) {
        int length = x.dim(1), e = x.dim(2);
        return Tensor.of(Arrays.copyOfRange(x.toArray(), b * length * e, (b + 1) * length * e), 1, length, e);
    }

    /** QK-norm weights around 1 (in [0.5, 1.5)). */
    static float[] normWeights(SplittableRandom random, int n) {
        float[] w = RandomTensors.uniformArray(random, n, 0.5);
        for (int i = 0; i < n; i++) {
            w[i] += 1;
        }
        return w;
    }
}
