package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.ScaledDotProductAttentionPropertyTest.KEY_LENGTHS;
import static io.github.attn4j.ScaledDotProductAttentionPropertyTest.LENGTHS;
import static io.github.attn4j.RandomTensors.uniform;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** {@link MultiHeadAttention} against {@link ReferenceAttention#multiHead} on random configurations, inputs and masks. */
class MultiHeadAttentionPropertyTest {
    /** (embedDim, numHeads, headDim or 0 for embedDim/numHeads, kvHeads, keyDim or 0 for E, valueDim or 0 for E). */
    private static final int[][] CONFIGS = {
            {64, 4, 0, 4, 0, 0}, {64, 4, 0, 2, 0, 0}, {64, 1, 16, 1, 0, 0}, {48, 3, 13, 1, 0, 0}, {40, 5, 7, 5, 0, 0},
            {96, 6, 17, 3, 0, 0}, {32, 8, 0, 8, 0, 0}, {33, 3, 0, 3, 0, 0}, {16, 2, 24, 1, 0, 0}, {24, 4, 1, 2, 0, 0},
            {32, 4, 0, 4, 20, 52}, {48, 6, 0, 2, 7, 48}, {16, 2, 9, 1, 33, 5}};

    @Test
    void moduleMatchesReference() {
        qt().withExamples(150).forAll(LENGTHS, KEY_LENGTHS, integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(MultiHeadAttentionPropertyTest::check);
    }

    @Test
    void edgeLengthsWithEveryConfiguration() {
        int[] sizes = {1, 13, 17, 207};
        int n = 0;
        for (int lq : sizes) {
            for (int lk : sizes) {
                check(lq, lk, n % RandomMasks.KINDS, 1000L + n);
                n++;
            }
        }
    }

    private static void check(int lq, int lk, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] c = CONFIGS[random.nextInt(CONFIGS.length)];
        int e = c[0], h = c[1], hd = c[2] == 0 ? e / h : c[2], kvh = c[3];
        int kdim = c[4] == 0 ? e : c[4], vdim = c[5] == 0 ? e : c[5];
        boolean bias = random.nextBoolean();
        boolean self = kdim == e && vdim == e && random.nextInt(3) == 0;
        boolean customScale = random.nextBoolean();
        float scale = customScale ? (float) random.nextDouble(0.05, 1.5) : (float) (1 / Math.sqrt(hd));
        int batch = 1 + random.nextInt(4);
        if (self) {
            lk = lq;
        }
        float bound = (float) (1 / Math.sqrt(e));
        float[] wq = weights(random, h * hd * e, bound), wk = weights(random, kvh * hd * kdim, bound);
        float[] wv = weights(random, kvh * hd * vdim, bound), wo = weights(random, e * h * hd, (float) (1 / Math.sqrt(h * hd)));
        // With biases, each one is left out on its own one time in four.
        float[] bq = bias(random, bias, h * hd), bk = bias(random, bias, kvh * hd);
        float[] bv = bias(random, bias, kvh * hd), bo = bias(random, bias, e);

        MultiHeadAttentionBuilder builder = MultiHeadAttention.builder(e, h).kvHeads(kvh).bias(bias)
                .keyDim(kdim).valueDim(vdim).weights(wq, wk, wv, wo);
        if (customScale) {
            builder.scale(scale);
        }
        if (c[2] != 0) {
            builder.headDim(hd);
        }
        if (bias) {
            builder.biases(bq, bk, bv, bo);
        }
        MultiHeadAttention module = builder.build();
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, kvh, hd, kdim, vdim, scale,
                wq, wk, wv, wo, bq, bk, bv, bo);

        Tensor query = uniform(random, batch, lq, e);
        Tensor key = self ? query : uniform(random, batch, lk, kdim);
        Tensor value = self ? query : uniform(random, batch, lk, vdim);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, h, lq, lk);

        AttentionOutput expected = ReferenceAttention.multiHead(query, key, value, mask, p);
        int biasTerms = Tolerance.maskBiasTerms(mask, lq, lk);
        int reduction = Math.max(e, Math.max(kdim, vdim)) + hd + lk + h * hd + biasTerms;
        String what = "E=" + e + " H=" + h + " hd=" + hd + " KVH=" + kvh + " kdim=" + kdim + " vdim=" + vdim
                + " scale=" + scale + " bias=" + bias + " self=" + self
                + " B=" + batch + " Lq=" + lq + " Lk=" + lk + " " + mask;
        Tensor out = self ? module.forward(query, mask) : module.forward(query, key, value, mask);
        Tolerance.assertClose(expected.output().toArray(), out.toArray(), reduction, what);
        AttentionOutput both = module.forwardWithWeights(query, key, value, mask);
        Tolerance.assertClose(expected.output().toArray(), both.output().toArray(), reduction, what + " (with weights)");
        Tolerance.assertClose(expected.weights().toArray(), both.weights().toArray(), Math.max(e, kdim) + hd + biasTerms,
                what + " weights");
    }

    /**
     * Each of bq, bk, bv, bo null on its own (Qwen 2 has q/k/v biases and no output bias), with
     * head widths on and off the GEMM panel grid, through self-attention, cross-attention and
     * one cached pass, against the reference.
     */
    @Test
    void eachBiasMayBeLeftOutOnItsOwn() {
        for (int[] c : new int[][]{{64, 2, 1}, {48, 6, 2}, {36, 3, 3}}) {
            int e = c[0], h = c[1], kvh = c[2], hd = e / h;
            for (int missing = 0; missing < 4; missing++) {
                SplittableRandom random = new SplittableRandom(31L * e + missing);
                float bound = (float) (1 / Math.sqrt(e));
                float[] wq = weights(random, h * hd * e, bound), wk = weights(random, kvh * hd * e, bound);
                float[] wv = weights(random, kvh * hd * e, bound), wo = weights(random, e * h * hd, bound);
                float[][] b = {weights(random, h * hd, 0.5f), weights(random, kvh * hd, 0.5f),
                        weights(random, kvh * hd, 0.5f), weights(random, e, 0.5f)};
                b[missing] = null;
                MultiHeadAttention module = MultiHeadAttention.builder(e, h).kvHeads(kvh).weights(wq, wk, wv, wo)
                        .biases(b[0], b[1], b[2], b[3]).build();
                ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, kvh, hd, (float) (1 / Math.sqrt(hd)),
                        wq, wk, wv, wo, b[0], b[1], b[2], b[3]);
                Tensor x = uniform(random, 2, 19, e), kv = uniform(random, 2, 23, e);
                int reduction = 2 * e + hd + 23;
                String what = "E=" + e + " H=" + h + " KVH=" + kvh + " without bias " + "qkvo".charAt(missing);
                Tolerance.assertClose(ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), p).output().toArray(),
                        module.forward(x, AttentionMask.causal()).toArray(), reduction, what + " (self)");
                Tolerance.assertClose(ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), p).output().toArray(),
                        module.forwardCached(x, module.newKvCache(2, 0)).toArray(), reduction, what + " (cached)");
                AttentionOutput expected = ReferenceAttention.multiHead(x, kv, kv, AttentionMask.none(), p);
                AttentionOutput both = module.forwardWithWeights(x, kv, kv, AttentionMask.none());
                Tolerance.assertClose(expected.output().toArray(), both.output().toArray(), reduction, what + " (cross)");
                Tolerance.assertClose(expected.weights().toArray(), both.weights().toArray(), e + hd, what + " (weights)");
            }
        }
    }

    private static float[] bias(SplittableRandom random, boolean bias, int n) {
        return bias && random.nextInt(4) != 0 ? weights(random, n, 0.5f) : null;
    }

    private static float[] weights(SplittableRandom random, int n, float bound) {
        return RandomTensors.uniformArray(random, n, bound);
    }
}
