package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import io.github.attn4j.reference.ReferenceAttention.DecoderOptions;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static io.github.attn4j.RandomTensors.uniformArray;
import static io.github.attn4j.ScaledDotProductAttentionPropertyTest.KEY_LENGTHS;
import static io.github.attn4j.ScaledDotProductAttentionPropertyTest.LENGTHS;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * The decoder options of {@link MultiHeadAttention} (RoPE, QK-norm, soft-cap, sinks, per-projection
 * biases) against {@link ReferenceAttention#multiHead(Tensor, Tensor, Tensor, AttentionMask,
 * ReferenceAttention.Parameters, DecoderOptions)} in double precision: self-attention,
 * cross-attention with weights, and the same sequence fed through {@code forwardCached} in chunks.
 */
class MultiHeadAttentionDecoderTest {
    /** (embedDim, numHeads, headDim or 0 for embedDim/numHeads, kvHeads, keyDim or 0 for E, valueDim or 0 for E). */
    private static final int[][] CONFIGS = {
            {64, 4, 0, 4, 0, 0}, {64, 4, 0, 2, 0, 0}, {64, 2, 0, 1, 0, 0}, {48, 3, 16, 1, 0, 0}, {40, 5, 8, 5, 0, 0},
            {96, 6, 18, 3, 0, 0}, {16, 2, 24, 1, 0, 0}, {32, 4, 0, 4, 20, 52}};

    @Test
    void moduleWithDecoderOptionsMatchesReference() {
        qt().withExamples(80).forAll(LENGTHS, KEY_LENGTHS, integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(MultiHeadAttentionDecoderTest::check);
    }

    private static void check(int lq, int lk, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] c = CONFIGS[random.nextInt(CONFIGS.length)];
        int e = c[0], h = c[1], hd = c[2] == 0 ? e / h : c[2], kvh = c[3];
        int kdim = c[4] == 0 ? e : c[4], vdim = c[5] == 0 ? e : c[5];
        int batch = 1 + random.nextInt(3);
        float bound = (float) (1 / Math.sqrt(e));
        float[] wq = uniformArray(random, h * hd * e, bound), wk = uniformArray(random, kvh * hd * kdim, bound);
        float[] wv = uniformArray(random, kvh * hd * vdim, bound), wo = uniformArray(random, e * h * hd, bound);
        float[] bq = bias(random, h * hd), bk = bias(random, kvh * hd), bv = bias(random, kvh * hd), bo = bias(random, e);
        MultiHeadAttentionBuilder builder = MultiHeadAttention.builder(e, h).headDim(hd).kvHeads(kvh).keyDim(kdim).valueDim(vdim)
                .weights(wq, wk, wv, wo).biases(bq, bk, bv, bo);

        RotaryEmbedding rope = random.nextInt(3) == 0 ? null : rope(random, hd);
        float[] qNorm = null, kNorm = null, sinks = null;
        float eps = 1e-6f, softcap = 0f;
        if (rope != null) {
            builder.rotary(rope);
        }
        if (random.nextBoolean()) {
            qNorm = MultiHeadAttentionCachedTest.normWeights(random, hd);
            kNorm = MultiHeadAttentionCachedTest.normWeights(random, hd);
            builder.qkNorm(qNorm, kNorm, eps);
        }
        if (random.nextBoolean()) {
            softcap = (float) random.nextDouble(0.5, 20);
            builder.softcap(softcap);
        }
        if (random.nextBoolean()) {
            sinks = uniformArray(random, h, 2);
            builder.sinks(sinks);
        }
        MultiHeadAttention module = builder.build();
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, kvh, hd, kdim, vdim, (float) (1 / Math.sqrt(hd)),
                wq, wk, wv, wo, bq, bk, bv, bo);
        DecoderOptions o = new DecoderOptions(rope, qNorm, kNorm, eps, softcap, sinks);
        String what = "E=" + e + " H=" + h + " hd=" + hd + " KVH=" + kvh + " kdim=" + kdim + " vdim=" + vdim + " B=" + batch
                + " Lq=" + lq + " Lk=" + lk + " rope=" + rope + " qkNorm=" + (qNorm != null) + " softcap=" + softcap
                + " sinks=" + (sinks != null) + " biases=" + (bq != null) + (bk != null) + (bv != null) + (bo != null);
        int reduction = Math.max(e, Math.max(kdim, vdim)) + 2 * hd + Math.max(lq, lk) + h * hd;

        Tensor query = uniform(random, batch, lq, e);
        Tensor key = uniform(random, batch, lk, kdim), value = uniform(random, batch, lk, vdim);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, h, lq, lk);
        AttentionOutput expected = ReferenceAttention.multiHead(query, key, value, mask, p, o);
        AttentionOutput both = module.forwardWithWeights(query, key, value, mask);
        int biasTerms = Tolerance.maskBiasTerms(mask, lq, lk);
        Tolerance.assertClose(expected.output().toArray(), both.output().toArray(), reduction + biasTerms, what + " " + mask);
        Tolerance.assertClose(expected.weights().toArray(), both.weights().toArray(), Math.max(e, kdim) + 2 * hd + biasTerms,
                what + " " + mask + " weights");
        if (kdim != e || vdim != e) {
            return;
        }
        // Self-attention, then the same sequence in chunks through a cache, under a causal mask
        // joined with a sliding window and/or ALiBi.
        AttentionMask extra = random.nextBoolean() ? AttentionMask.slidingWindow(1 + random.nextInt(40)) : AttentionMask.none();
        if (random.nextBoolean()) {
            extra = extra.and(AttentionMask.alibi(AttentionMask.alibiSlopes(h)));
        }
        AttentionMask causal = AttentionMask.causal().and(extra);
        float[] self = ReferenceAttention.multiHead(query, query, query, causal, p, o).output().toArray();
        reduction += Tolerance.maskBiasTerms(causal, lq, lq);
        Tolerance.assertClose(self, module.forward(query, causal).toArray(), reduction, what + " self " + causal);
        KvCache cache = module.newKvCache(batch, 0);
        float[] chunked = new float[self.length];
        for (int done = 0; done < lq; ) {
            int t = Math.min(lq - done, 1 + random.nextInt(random.nextBoolean() ? 3 : 60));
            float[] y = module.forwardCached(MultiHeadAttentionCachedTest.tokens(query, done, t), cache, extra).toArray();
            for (int b = 0; b < batch; b++) {
                System.arraycopy(y, b * t * e, chunked, (b * lq + done) * e, t * e);
            }
            done += t;
        }
        Tolerance.assertClose(self, chunked, reduction, what + " cached " + causal);
    }

    /** rotate_half or interleaved, all of the head or part of it, sometimes with linear, Llama 3.1 or YaRN scaling. */
    static RotaryEmbedding rope(SplittableRandom random, int hd) {
        int rotaryDim = random.nextBoolean() ? hd / 2 * 2 : Math.max(2, hd / 4 * 2);
        RotaryEmbedding rope = RotaryEmbedding.of(rotaryDim, random.nextBoolean() ? 10000 : 500000);
        if (random.nextBoolean()) {
            rope = rope.interleaved();
        }
        return switch (random.nextInt(5)) {
            case 0 -> rope.linearScaling(4);
            case 1 -> rope.llama3Scaling(8, 1, 4, 64);
            case 2 -> rope.yarnScaling(32, 64, 32, 1, random.nextBoolean());
            default -> rope;
        };
    }

    /** A bias, or null (no bias for that projection) one time in three. */
    private static float[] bias(SplittableRandom random, int n) {
        return random.nextInt(3) == 0 ? null : uniformArray(random, n, 0.5);
    }
}
