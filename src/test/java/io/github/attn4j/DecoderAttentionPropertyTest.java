package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * {@link ScaledDotProductAttention} with the decoder options (soft-cap, sinks) and every mask
 * kind (sliding windows and ALiBi among them), on random shapes with GQA/MQA, against the
 * double-precision reference; over a {@link KvCache}, against the same attention over the cached
 * keys as tensors; and bit-identical across thread counts.
 *
 * <p>Tolerance: {@link Tolerance} with reduction length {@code d + Lk}, plus {@code cap} under a
 * soft-cap: {@code cap · tanh} is within 4 ulp of 1 times cap, so it adds up to
 * {@code 4 · cap · ε} to a score, the size of {@code cap} more terms of the bound; plus the mask's
 * {@link Tolerance#maskBiasTerms bias terms}.
 */
class DecoderAttentionPropertyTest {
    private static final int[][] HEADS = {{1, 1}, {2, 2}, {4, 2}, {6, 3}, {4, 1}, {8, 2}};
    private static final int[] WIDTHS = {1, 7, 16, 17, 32, 64};

    @Test
    void softcapSinksAndMasksMatchTheReference() {
        qt().withExamples(200).forAll(ScaledDotProductAttentionPropertyTest.LENGTHS, ScaledDotProductAttentionPropertyTest.KEY_LENGTHS,
                        integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(DecoderAttentionPropertyTest::check);
    }

    @Test
    void cachedAttentionEqualsAttentionOverTheSameKeys() {
        qt().withExamples(60).forAll(integers().between(1, 600), integers().between(1, 40), longs().all())
                .checkAssert(DecoderAttentionPropertyTest::checkCache);
    }

    private static void check(int lq, int lk, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int batch = 1 + random.nextInt(2);
        int[] hv = HEADS[random.nextInt(HEADS.length)];
        int heads = hv[0], kvHeads = hv[1];
        int d = WIDTHS[random.nextInt(WIDTHS.length)], dv = WIDTHS[random.nextInt(WIDTHS.length)];
        Tensor q = uniform(random, batch, heads, lq, d);
        Tensor k = uniform(random, batch, kvHeads, lk, d);
        Tensor v = uniform(random, batch, kvHeads, lk, dv);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, heads, lq, lk);
        float scale = (float) (random.nextDouble(0.5, 8) / Math.sqrt(d));
        float cap = random.nextBoolean() ? 0f : (float) random.nextDouble(0.5, 30);
        float[] sinks = random.nextBoolean() ? null : RandomTensors.uniformArray(random, heads, 3);
        var builder = ScaledDotProductAttention.builder().scale(scale).threads(1 + random.nextInt(3));
        if (cap > 0) {
            builder.softcap(cap);
        }
        if (sinks != null) {
            builder.sinks(sinks);
        }
        ScaledDotProductAttention sdpa = builder.build();
        AttentionOutput expected = ReferenceAttention.scaledDotProduct(q, k, v, mask,
                new ReferenceAttention.ScoreOptions(scale, cap, sinks));
        String what = "B=" + batch + " H=" + heads + " KVH=" + kvHeads + " Lq=" + lq + " Lk=" + lk + " d=" + d + " dv=" + dv
                + " cap=" + cap + " sinks=" + (sinks != null) + " " + mask;
        int n = d + lk + (int) Math.ceil(cap) + Tolerance.maskBiasTerms(mask, lq, lk);
        Tolerance.assertClose(expected.output().toArray(), sdpa.attend(q, k, v, mask).toArray(), n, what);
        AttentionOutput both = sdpa.attendWithWeights(q, k, v, mask);
        Tolerance.assertClose(expected.output().toArray(), both.output().toArray(), n, what + " (materialized)");
        Tolerance.assertClose(expected.weights().toArray(), both.weights().toArray(), n, what + " weights");
    }

    /**
     * Keys appended to a cache in random chunks, some rows sitting out some appends: attending the
     * last T queries over the cache equals attending them over each row's keys as tensors with the
     * causal mask (and a window), row by row; thread counts give the same bits.
     */
    private static void checkCache(int length, int window, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int batch = 1 + random.nextInt(3);
        int[] hv = HEADS[random.nextInt(HEADS.length)];
        int heads = hv[0], kvHeads = hv[1];
        int d = WIDTHS[random.nextInt(WIDTHS.length)];
        KvCache cache = KvCache.create(batch, kvHeads, d, random.nextInt(8));
        int[] lengths = new int[batch];
        float[][] keys = new float[batch][], values = new float[batch][];
        for (int b = 0; b < batch; b++) {
            lengths[b] = 1 + random.nextInt(length);
            keys[b] = RandomTensors.uniformArray(random, kvHeads * lengths[b] * d);
            values[b] = RandomTensors.uniformArray(random, kvHeads * lengths[b] * d);
        }
        // Append in chunks: each step offers T tokens to every row, row b takes what it still needs (maybe 0).
        int[] filled = new int[batch];
        while (!java.util.Arrays.equals(filled, lengths)) {
            int t = 1 + random.nextInt(50);
            int[] tokens = new int[batch];
            float[] k = new float[batch * kvHeads * t * d], v = new float[k.length];
            for (int b = 0; b < batch; b++) {
                tokens[b] = random.nextInt(4) == 0 ? 0 : Math.min(t, lengths[b] - filled[b]);
                for (int g = 0; g < kvHeads; g++) {
                    int src = (g * lengths[b] + filled[b]) * d, dst = ((b * kvHeads + g) * t) * d;
                    System.arraycopy(keys[b], src, k, dst, tokens[b] * d);
                    System.arraycopy(values[b], src, v, dst, tokens[b] * d);
                }
                filled[b] += tokens[b];
            }
            cache.append(Tensor.of(k, batch, kvHeads, t, d), Tensor.of(v, batch, kvHeads, t, d), tokens);
        }
        int shortest = java.util.Arrays.stream(lengths).min().orElseThrow();
        int t = 1 + random.nextInt(Math.min(shortest, 20));
        Tensor q = uniform(random, batch, heads, t, d);
        AttentionMask extra = random.nextBoolean() ? AttentionMask.slidingWindow(window) : AttentionMask.none();
        float[] cached = ScaledDotProductAttention.builder().threads(1).build().attend(q, cache, extra).toArray();
        float[] other = ScaledDotProductAttention.builder().threads(3).build().attend(q, cache, extra).toArray();
        assertArrayEquals(cached, other, 0f, "thread counts");
        for (int b = 0; b < batch; b++) {
            Tensor qb = Tensor.of(java.util.Arrays.copyOfRange(q.toArray(), b * heads * t * d, (b + 1) * heads * t * d), 1, heads, t, d);
            Tensor kb = Tensor.of(keys[b], 1, kvHeads, lengths[b], d), vb = Tensor.of(values[b], 1, kvHeads, lengths[b], d);
            float[] alone = ScaledDotProductAttention.builder().threads(1).build()
                    .attend(qb, kb, vb, AttentionMask.causal().and(extra)).toArray();
            float[] row = java.util.Arrays.copyOfRange(cached, b * heads * t * d, (b + 1) * heads * t * d);
            Tolerance.assertClose(alone, row, d + lengths[b], "row " + b + " of " + java.util.Arrays.toString(lengths) + " T=" + t
                    + " H=" + heads + " KVH=" + kvHeads + " d=" + d + " " + extra);
        }
    }
}
