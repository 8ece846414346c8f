package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Module behaviour that follows from the definition alone, checked without the reference. */
class MultiHeadAttentionTest {
    private static final float TOL = 1e-4f;

    private static float[] uniform(SplittableRandom random, int n, double bound) {
        return RandomTensors.uniformArray(random, n, bound);
    }

    private static Tensor input(SplittableRandom random, int... shape) {
        int n = 1;
        for (int d : shape) {
            n *= d;
        }
        return Tensor.of(uniform(random, n, 1), shape);
    }

    @Test
    void groupedQueryAttentionEqualsFullAttentionWithRepeatedKeyValueHeads() {
        int e = 24, h = 6, kvh = 2, hd = 5, group = h / kvh;
        SplittableRandom random = new SplittableRandom(3);
        float[] wq = uniform(random, h * hd * e, 0.3), wk = uniform(random, kvh * hd * e, 0.3);
        float[] wv = uniform(random, kvh * hd * e, 0.3), wo = uniform(random, e * h * hd, 0.3);
        float[] bq = uniform(random, h * hd, 0.1), bk = uniform(random, kvh * hd, 0.1);
        float[] bv = uniform(random, kvh * hd, 0.1), bo = uniform(random, e, 0.1);
        // Full attention whose key/value head h holds the weights of GQA head h / group.
        float[] wkFull = new float[h * hd * e], wvFull = new float[h * hd * e];
        float[] bkFull = new float[h * hd], bvFull = new float[h * hd];
        for (int head = 0; head < h; head++) {
            int src = head / group;
            System.arraycopy(wk, src * hd * e, wkFull, head * hd * e, hd * e);
            System.arraycopy(wv, src * hd * e, wvFull, head * hd * e, hd * e);
            System.arraycopy(bk, src * hd, bkFull, head * hd, hd);
            System.arraycopy(bv, src * hd, bvFull, head * hd, hd);
        }
        MultiHeadAttention gqa = MultiHeadAttention.builder(e, h).headDim(hd).kvHeads(kvh)
                .weights(wq, wk, wv, wo).biases(bq, bk, bv, bo).build();
        MultiHeadAttention full = MultiHeadAttention.builder(e, h).headDim(hd)
                .weights(wq, wkFull, wvFull, wo).biases(bq, bkFull, bvFull, bo).build();
        Tensor q = input(random, 2, 9, e), kv = input(random, 2, 14, e);
        assertArrayEquals(full.forward(q, kv, kv, AttentionMask.none()).toArray(),
                gqa.forward(q, kv, kv, AttentionMask.none()).toArray(), TOL);
    }

    @Test
    void fusedSelfAttentionEqualsSeparateProjections() {
        MultiHeadAttention m = MultiHeadAttention.builder(32, 4).kvHeads(2).seed(5).build();
        Tensor x = input(new SplittableRandom(9), 3, 23, 32);
        Tensor copy = Tensor.of(x.toArray(), x.shape());
        AttentionMask mask = AttentionMask.causal();
        assertArrayEquals(m.forward(x, copy, copy, mask).toArray(), m.forward(x, mask).toArray(), TOL);
    }

    @Test
    void forwardEqualsOutputOfForwardWithWeights() {
        MultiHeadAttention m = MultiHeadAttention.builder(48, 3).headDim(13).seed(1).build();
        SplittableRandom random = new SplittableRandom(2);
        Tensor q = input(random, 2, 17, 48), kv = input(random, 2, 207, 48);
        boolean[][] padded = new boolean[2][207];
        padded[1][5] = padded[1][200] = true;
        AttentionMask mask = AttentionMask.keyPadding(padded).and(AttentionMask.causal());
        AttentionOutput both = m.forwardWithWeights(q, kv, kv, mask);
        assertArrayEquals(m.forward(q, kv, kv, mask).toArray(), both.output().toArray(), TOL);
        for (int b = 0; b < 2; b++) {
            for (int h = 0; h < 3; h++) {
                for (int i = 0; i < 17; i++) {
                    double sum = 0;
                    for (int j = 0; j < 207; j++) {
                        float w = both.weights().get(b, h, i, j);
                        boolean allowed = j <= i + 207 - 17 && !padded[b][j];
                        assertTrue(allowed ? w > 0 : w == 0f, "weight " + b + "," + h + "," + i + "," + j);
                        sum += w;
                    }
                    assertEquals(1.0, sum, 1e-5);
                }
            }
        }
    }

    @Test
    void fullyMaskedQueryRowsGiveTheOutputBias() {
        int e = 16;
        SplittableRandom random = new SplittableRandom(4);
        float[] bo = uniform(random, e, 1);
        MultiHeadAttention m = MultiHeadAttention.builder(e, 2)
                .weights(uniform(random, e * e, 0.5), uniform(random, e * e, 0.5), uniform(random, e * e, 0.5), uniform(random, e * e, 0.5))
                .biases(uniform(random, e, 1), uniform(random, e, 1), uniform(random, e, 1), bo).build();
        Tensor x = input(random, 1, 5, e);
        float[] keep = new float[5 * 5];
        java.util.Arrays.fill(keep, 1f);
        java.util.Arrays.fill(keep, 2 * 5, 3 * 5, 0f);                       // query 2 may attend nothing
        float[] bias = new float[5 * 5];
        java.util.Arrays.fill(bias, 4 * 5, 5 * 5, Float.NEGATIVE_INFINITY);   // query 4: every key at -inf
        AttentionMask mask = AttentionMask.keep(Tensor.of(keep, 5, 5)).and(AttentionMask.additive(Tensor.of(bias, 5, 5)));
        AttentionOutput out = m.forwardWithWeights(x, x, x, mask);
        for (int row : new int[]{2, 4}) {
            for (int c = 0; c < e; c++) {
                assertEquals(bo[c], out.output().get(0, row, c), 1e-6f);
            }
            for (int h = 0; h < 2; h++) {
                for (int j = 0; j < 5; j++) {
                    assertEquals(0f, out.weights().get(0, h, row, j));
                }
            }
        }
        assertArrayEquals(out.output().toArray(), m.forward(x, mask).toArray(), TOL);
        for (float v : out.output().toArray()) {
            assertTrue(Float.isFinite(v));
        }
    }

    @Test
    void noBiasEqualsZeroBiases() {
        int e = 20;
        SplittableRandom random = new SplittableRandom(8);
        float[] wq = uniform(random, e * e, 0.4), wk = uniform(random, e * e, 0.4), wv = uniform(random, e * e, 0.4), wo = uniform(random, e * e, 0.4);
        MultiHeadAttention none = MultiHeadAttention.builder(e, 4).bias(false).weights(wq, wk, wv, wo).build();
        MultiHeadAttention zero = MultiHeadAttention.builder(e, 4).weights(wq, wk, wv, wo)
                .biases(new float[e], new float[e], new float[e], new float[e]).build();
        Tensor x = input(random, 2, 13, e);
        assertArrayEquals(zero.forward(x, AttentionMask.none()).toArray(), none.forward(x, AttentionMask.none()).toArray(), 0f);
    }

    @Test
    void singleHeadOfWidth16OverEmbedDim64WithoutBias() {
        MultiHeadAttention m = MultiHeadAttention.builder(64, 1).headDim(16).bias(false).seed(3).build();
        assertEquals(16, m.headDim());
        Tensor x = input(new SplittableRandom(1), 2, 7, 64);
        assertArrayEquals(new int[]{2, 7, 64}, m.forward(x, AttentionMask.none()).shape());
    }

    @Test
    void weightsAreCopiedAtBuild() {
        int e = 8;
        SplittableRandom random = new SplittableRandom(6);
        float[] wq = uniform(random, e * e, 0.5);
        MultiHeadAttention m = MultiHeadAttention.builder(e, 2).bias(false)
                .weights(wq, uniform(random, e * e, 0.5), uniform(random, e * e, 0.5), uniform(random, e * e, 0.5)).build();
        Tensor x = input(random, 1, 4, e);
        float[] before = m.forward(x, AttentionMask.none()).toArray();
        java.util.Arrays.fill(wq, 100f);
        assertArrayEquals(before, m.forward(x, AttentionMask.none()).toArray(), 0f);
    }

    @Test
    void sameSeedSameModuleDifferentSeedDifferentModule() {
        Tensor x = input(new SplittableRandom(1), 1, 6, 16);
        float[] a = MultiHeadAttention.builder(16, 2).seed(1).build().forward(x, AttentionMask.none()).toArray();
        float[] b = MultiHeadAttention.builder(16, 2).seed(1).build().forward(x, AttentionMask.none()).toArray();
        float[] c = MultiHeadAttention.builder(16, 2).seed(2).build().forward(x, AttentionMask.none()).toArray();
        assertArrayEquals(a, b, 0f);
        assertTrue(!java.util.Arrays.equals(a, c));
    }
}
