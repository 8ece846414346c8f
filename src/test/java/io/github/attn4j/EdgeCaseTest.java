package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Degenerate shapes and extreme values, against the reference or against values known by hand. */
class EdgeCaseTest {
    private static void assertFinite(float[] values) {
        for (float v : values) {
            assertTrue(Float.isFinite(v), "non-finite value " + v);
        }
    }

    @Test
    void emptyBatchGivesAnEmptyResult() {
        MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(1).build();
        Tensor out = m.forward(Tensor.zeros(0, 5, 16), AttentionMask.causal());
        assertArrayEquals(new int[]{0, 5, 16}, out.shape());
        AttentionOutput both = m.forwardWithWeights(Tensor.zeros(0, 5, 16), Tensor.zeros(0, 7, 16), Tensor.zeros(0, 7, 16),
                AttentionMask.keyPadding(new boolean[0][]));
        assertArrayEquals(new int[]{0, 2, 5, 7}, both.weights().shape());
    }

    @Test
    void noKeysGivesZeroAttentionAndTheOutputBias() {
        int e = 8;
        float[] bo = {1, 2, 3, 4, 5, 6, 7, 8};
        MultiHeadAttention m = MultiHeadAttention.builder(e, 2)
                .biases(new float[e], new float[e], new float[e], bo).seed(2).build();
        AttentionOutput out = m.forwardWithWeights(uniform(new SplittableRandom(1), 1, 3, e), Tensor.zeros(1, 0, e),
                Tensor.zeros(1, 0, e), AttentionMask.none());
        for (int i = 0; i < 3; i++) {
            for (int c = 0; c < e; c++) {
                assertEquals(bo[c], out.output().get(0, i, c));
            }
        }
        assertArrayEquals(new int[]{1, 2, 3, 0}, out.weights().shape());
    }

    @Test
    void noQueriesGivesAnEmptyResult() {
        Tensor out = ScaledDotProductAttention.apply(Tensor.zeros(2, 4, 0, 8), Tensor.zeros(2, 4, 6, 8), Tensor.zeros(2, 4, 6, 8),
                AttentionMask.causal());
        assertArrayEquals(new int[]{2, 4, 0, 8}, out.shape());
    }

    @Test
    void noQueryHeadsGivesAnEmptyResult() {
        // Zero query heads over two key/value heads: 0 is a multiple of 2, so the shapes are valid
        // and the result is empty, with or without weights, from tensors and from a cache.
        Tensor q = Tensor.zeros(2, 0, 3, 8), k = Tensor.zeros(2, 2, 5, 8), v = Tensor.zeros(2, 2, 5, 4);
        for (int threads = 1; threads <= 2; threads++) {
            ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(threads).build();
            assertArrayEquals(new int[]{2, 0, 3, 4}, sdpa.attend(q, k, v, AttentionMask.causal()).shape());
            AttentionOutput both = sdpa.attendWithWeights(q, k, v, AttentionMask.none());
            assertArrayEquals(new int[]{2, 0, 3, 4}, both.output().shape());
            assertArrayEquals(new int[]{2, 0, 3, 5}, both.weights().shape());
            KvCache cache = KvCache.create(2, 2, 8, 4);
            cache.append(k, Tensor.zeros(2, 2, 5, 8));
            assertArrayEquals(new int[]{2, 0, 3, 8}, sdpa.attend(q, cache, AttentionMask.causal()).shape());
        }
    }

    @Test
    void headWidthOneAndSingleTokens() {
        SplittableRandom random = new SplittableRandom(3);
        Tensor q = uniform(random, 2, 3, 1, 1), k = uniform(random, 2, 3, 1, 1), v = uniform(random, 2, 3, 1, 1);
        // One key: its weight is 1 and the output is its value.
        assertArrayEquals(v.toArray(), ScaledDotProductAttention.apply(q, k, v, AttentionMask.causal()).toArray(), 0f);
        Tensor q2 = uniform(random, 1, 2, 9, 1), k2 = uniform(random, 1, 2, 13, 1), v2 = uniform(random, 1, 2, 13, 1);
        Tolerance.assertClose(ReferenceAttention.scaledDotProduct(q2, k2, v2, AttentionMask.none(), 1f).output().toArray(),
                ScaledDotProductAttention.apply(q2, k2, v2, AttentionMask.none(), 1f).toArray(), 14, "headDim 1");
    }

    @Test
    void logitsInTheThousandsDoNotOverflow() {
        SplittableRandom random = new SplittableRandom(4);
        Tensor q = uniform(random, 1, 2, 17, 16), k = uniform(random, 1, 2, 33, 16), v = uniform(random, 1, 2, 33, 8);
        float scale = 5000f;   // scores reach tens of thousands
        AttentionOutput actual = ScaledDotProductAttention.applyWithWeights(q, k, v, AttentionMask.causal(), scale);
        assertFinite(actual.output().toArray());
        assertFinite(ScaledDotProductAttention.apply(q, k, v, AttentionMask.causal(), scale).toArray());
        // At this scale float rounding of the scores (ulp of 1e4 is 1e-3) may decide near-ties, so the
        // values are not compared with the reference here (see largeButFiniteLogitsMatchTheReference);
        // what must hold is that nothing overflows and every row is still a distribution.
        for (int h = 0; h < 2; h++) {
            for (int i = 0; i < 17; i++) {
                double sum = 0;
                for (int j = 0; j < 33; j++) {
                    sum += actual.weights().get(0, h, i, j);
                }
                assertEquals(1.0, sum, 1e-5);
            }
        }
    }

    @Test
    void largeButFiniteLogitsMatchTheReference() {
        SplittableRandom random = new SplittableRandom(5);
        Tensor q = uniform(random, 1, 2, 17, 16), k = uniform(random, 1, 2, 33, 16), v = uniform(random, 1, 2, 33, 8);
        float[] bias = new float[17 * 33];
        for (int i = 0; i < bias.length; i++) {
            bias[i] = 3000f + (float) random.nextDouble(-2, 2);     // shifts every logit by about 3000
        }
        AttentionMask mask = AttentionMask.additive(Tensor.of(bias, 17, 33));
        AttentionOutput expected = ReferenceAttention.scaledDotProduct(q, k, v, mask, 0.25f);
        // Each score carries an absolute rounding error of about ulp(3000) = 2.4e-4, hence the longer reduction length.
        Tolerance.assertClose(expected.output().toArray(), ScaledDotProductAttention.apply(q, k, v, mask, 0.25f).toArray(),
                16 + 33 + 2048, "logits near 3000");
    }

    @Test
    void negativeInfinityEverywhereButOneKeySelectsThatKey() {
        SplittableRandom random = new SplittableRandom(6);
        Tensor q = uniform(random, 1, 1, 4, 8), k = uniform(random, 1, 1, 5, 8), v = uniform(random, 1, 1, 5, 3);
        float[] bias = new float[4 * 5];
        java.util.Arrays.fill(bias, Float.NEGATIVE_INFINITY);
        for (int i = 0; i < 4; i++) {
            bias[i * 5 + (i + 1)] = 0f;   // query i sees only key i + 1
        }
        float[] out = ScaledDotProductAttention.apply(q, k, v, AttentionMask.additive(Tensor.of(bias, 4, 5))).toArray();
        for (int i = 0; i < 4; i++) {
            for (int c = 0; c < 3; c++) {
                assertEquals(v.get(0, 0, i + 1, c), out[i * 3 + c], 0f);
            }
        }
    }

    @Test
    void subnormalInputsMatchTheReference() {
        SplittableRandom random = new SplittableRandom(7);
        Tensor q = uniform(random, 1, 2, 9, 16), k = uniform(random, 1, 2, 11, 16);
        float[] values = new float[2 * 11 * 4];
        for (int i = 0; i < values.length; i++) {
            values[i] = Float.MIN_VALUE * (1 + random.nextInt(1000));   // subnormal values
        }
        Tensor v = Tensor.of(values, 1, 2, 11, 4);
        float[] expected = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), 0.5f).output().toArray();
        float[] actual = ScaledDotProductAttention.apply(q, k, v, AttentionMask.none(), 0.5f).toArray();
        for (int i = 0; i < expected.length; i++) {
            // Weighted means of subnormals: exact up to a few units of Float.MIN_VALUE.
            assertEquals(expected[i], actual[i], 16 * Float.MIN_VALUE);
        }
    }

    @Test
    void nanInOneQueryRowStaysInThatRow() {
        SplittableRandom random = new SplittableRandom(8);
        MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(3).build();
        Tensor query = uniform(random, 1, 6, 16), memory = uniform(random, 1, 9, 16);
        float[] poisoned = query.toArray();
        poisoned[3 * 16 + 5] = Float.NaN;
        float[] clean = m.forward(query, memory, memory, AttentionMask.none()).toArray();
        float[] out = m.forward(Tensor.of(poisoned, 1, 6, 16), memory, memory, AttentionMask.none()).toArray();
        for (int i = 0; i < 6; i++) {
            for (int c = 0; c < 16; c++) {
                if (i == 3) {
                    assertTrue(Float.isNaN(out[i * 16 + c]));
                } else {
                    assertEquals(clean[i * 16 + c], out[i * 16 + c], 0f);
                }
            }
        }
    }
}
