package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.RandomTensors;
import io.github.attn4j.Tensor;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Identities the oracle must satisfy, each checked against another composition of the same math
 * (never against numbers the oracle produced itself): GQA is MHA with repeated key/value heads,
 * the module is projections around {@link ReferenceAttention#scaledDotProduct}, a missing bias
 * is a zero bias, and softmax rows are probability distributions.
 */
class ReferenceIdentitiesTest {
    private static float[] uniform(SplittableRandom r, int n) {
        return RandomTensors.uniformArray(r, n);
    }

    /** k of (B, KVH, L, d) with each head repeated {@code times} times in a row (repeat_interleave). */
    private static Tensor repeatHeads(Tensor k, int times) {
        int b = k.dim(0), kvh = k.dim(1), l = k.dim(2), d = k.dim(3);
        float[] src = k.toArray(), dst = new float[src.length * times];
        for (int bi = 0; bi < b; bi++) {
            for (int h = 0; h < kvh * times; h++) {
                System.arraycopy(src, ((bi * kvh + h / times) * l) * d, dst, ((bi * kvh * times + h) * l) * d, l * d);
            }
        }
        return Tensor.of(dst, b, kvh * times, l, d);
    }

    @Test
    void groupedQueryAttentionIsMultiHeadWithRepeatedKeyValueHeads() {
        SplittableRandom r = new SplittableRandom(1);
        Tensor q = Tensor.of(uniform(r, 2 * 6 * 5 * 4), 2, 6, 5, 4);
        Tensor k = Tensor.of(uniform(r, 2 * 2 * 7 * 4), 2, 2, 7, 4);
        Tensor v = Tensor.of(uniform(r, 2 * 2 * 7 * 3), 2, 2, 7, 3);
        AttentionOutput gqa = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.causal(), 0.7f);
        AttentionOutput mha = ReferenceAttention.scaledDotProduct(q, repeatHeads(k, 3), repeatHeads(v, 3), AttentionMask.causal(), 0.7f);
        assertArrayEquals(mha.output().toArray(), gqa.output().toArray(), 0f);
        assertArrayEquals(mha.weights().toArray(), gqa.weights().toArray(), 0f);
    }

    @Test
    void theModuleIsProjectionsAroundScaledDotProduct() {
        int e = 6, h = 2, hd = 5, l = 4;   // headDim independent of E / H
        SplittableRandom r = new SplittableRandom(2);
        float[] wq = uniform(r, h * hd * e), wk = uniform(r, h * hd * e), wv = uniform(r, h * hd * e), wo = uniform(r, e * h * hd);
        float[] bq = uniform(r, h * hd), bk = uniform(r, h * hd), bv = uniform(r, h * hd), bo = uniform(r, e);
        float[] x = uniform(r, l * e);
        var p = new ReferenceAttention.Parameters(e, h, h, hd, 0.3f, wq, wk, wv, wo, bq, bk, bv, bo);
        float[] module = ReferenceAttention.multiHead(Tensor.of(x, 1, l, e), Tensor.of(x, 1, l, e), Tensor.of(x, 1, l, e),
                AttentionMask.causal(), p).output().toArray();

        Tensor qh = heads(linear(x, l, e, wq, bq, h * hd), l, h, hd);
        Tensor kh = heads(linear(x, l, e, wk, bk, h * hd), l, h, hd);
        Tensor vh = heads(linear(x, l, e, wv, bv, h * hd), l, h, hd);
        float[] attended = ReferenceAttention.scaledDotProduct(qh, kh, vh, AttentionMask.causal(), 0.3f).output().toArray();
        float[] merged = new float[l * h * hd];
        for (int head = 0; head < h; head++) {
            for (int t = 0; t < l; t++) {
                System.arraycopy(attended, (head * l + t) * hd, merged, t * h * hd + head * hd, hd);
            }
        }
        float[] expected = linear(merged, l, h * hd, wo, bo, e);
        // The composition rounds to float between steps; the oracle stays in double.
        assertArrayEquals(expected, module, 1e-5f);
    }

    private static float[] linear(float[] x, int rows, int in, float[] w, float[] b, int out) {
        float[] y = new float[rows * out];
        for (int i = 0; i < rows; i++) {
            for (int o = 0; o < out; o++) {
                double acc = b[o];
                for (int c = 0; c < in; c++) {
                    acc += (double) x[i * in + c] * w[o * in + c];
                }
                y[i * out + o] = (float) acc;
            }
        }
        return y;
    }

    private static Tensor heads(float[] rows, int l, int h, int hd) {
        float[] t = new float[rows.length];
        for (int i = 0; i < l; i++) {
            for (int head = 0; head < h; head++) {
                System.arraycopy(rows, i * h * hd + head * hd, t, (head * l + i) * hd, hd);
            }
        }
        return Tensor.of(t, 1, h, l, hd);
    }

    @Test
    void aMissingBiasIsAZeroBiasEachOnItsOwn() {
        int e = 8;
        SplittableRandom r = new SplittableRandom(3);
        float[] w1 = uniform(r, e * e), w2 = uniform(r, e * e), w3 = uniform(r, e * e), w4 = uniform(r, e * e);
        float[] bk = uniform(r, e);
        Tensor x = Tensor.of(uniform(r, 2 * 3 * e), 2, 3, e);
        var partial = new ReferenceAttention.Parameters(e, 2, 2, 4, 0.5f, w1, w2, w3, w4, null, bk, null, null);
        var zeros = new ReferenceAttention.Parameters(e, 2, 2, 4, 0.5f, w1, w2, w3, w4, new float[e], bk, new float[e], new float[e]);
        assertArrayEquals(ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), zeros).output().toArray(),
                ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), partial).output().toArray(), 0f);
    }

    @Test
    void weightRowsAreDistributionsAndFullyMaskedRowsAreZero() {
        SplittableRandom r = new SplittableRandom(4);
        int lq = 5, lk = 6;
        Tensor q = Tensor.of(uniform(r, 2 * lq * 3), 1, 2, lq, 3), k = Tensor.of(uniform(r, 2 * lk * 3), 1, 2, lk, 3);
        boolean[][] keep = new boolean[lq][lk];
        for (int i = 1; i < lq; i++) {
            for (int j = 0; j < lk; j++) {
                keep[i][j] = (i + j) % 3 != 0;   // row 0 keeps nothing
            }
        }
        float[] flags = new float[lq * lk];
        for (int i = 0; i < lq; i++) {
            for (int j = 0; j < lk; j++) {
                flags[i * lk + j] = keep[i][j] ? 1f : 0f;
            }
        }
        float[] w = ReferenceAttention.scaledDotProduct(q, k, k, AttentionMask.keep(Tensor.of(flags, lq, lk)), 1f)
                .weights().toArray();
        for (int row = 0; row < 2 * lq; row++) {
            double sum = 0;
            for (int j = 0; j < lk; j++) {
                float x = w[row * lk + j];
                assertTrue(x >= 0, "weight " + x);
                if (!keep[row % lq][j]) {
                    assertEquals(0f, x);
                }
                sum += x;
            }
            assertEquals(row % lq == 0 ? 0 : 1, sum, 1e-6, "row " + row);
        }
    }
}
