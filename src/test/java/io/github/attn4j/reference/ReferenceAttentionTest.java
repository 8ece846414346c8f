package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.Tensor;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The oracle against values derived by hand. With all-zero queries every score is 0, so the
 * weights are uniform over the keys a mask leaves, which makes mask semantics easy to pin down.
 */
class ReferenceAttentionTest {
    private static final float[] KEYS = {10, 0, 0, 0, 10, 0, 0, 0, 10, 0, 0, 10};
    private static final float[] VALUES = {1, 0, 10, 0, 100, 5, 1000, 6};

    private static AttentionOutput zeroQueries(int batch, int lq, int lk, AttentionMask mask) {
        Tensor q = Tensor.zeros(batch, 1, lq, 2);
        Tensor k = Tensor.zeros(batch, 1, lk, 2);
        float[] v = new float[batch * lk];
        for (int i = 0; i < v.length; i++) {
            v[i] = i % lk;            // value of key j is j
        }
        return ReferenceAttention.scaledDotProduct(q, k, Tensor.of(v, batch, 1, lk, 1), mask, 1f);
    }

    @Test
    void textbookTensorFlowExample() {
        // Scores are q·k / √3. For q = [0,10,0]: (0, 100/√3, 0, 0): one-hot on key 1 to within e^-57.
        Tensor k = Tensor.of(KEYS, 1, 1, 4, 3), v = Tensor.of(VALUES, 1, 1, 4, 2);
        float scale = (float) (1 / Math.sqrt(3));
        AttentionOutput a = ReferenceAttention.scaledDotProduct(Tensor.of(new float[]{0, 10, 0}, 1, 1, 1, 3), k, v, AttentionMask.none(), scale);
        assertArrayEquals(new float[]{0, 1, 0, 0}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{10, 0}, a.output().toArray(), 1e-5f);
        AttentionOutput b = ReferenceAttention.scaledDotProduct(Tensor.of(new float[]{0, 0, 10}, 1, 1, 1, 3), k, v, AttentionMask.none(), scale);
        assertArrayEquals(new float[]{0, 0, 0.5f, 0.5f}, b.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{550, 5.5f}, b.output().toArray(), 1e-4f);
        AttentionOutput c = ReferenceAttention.scaledDotProduct(Tensor.of(new float[]{10, 10, 0}, 1, 1, 1, 3), k, v, AttentionMask.none(), scale);
        assertArrayEquals(new float[]{0.5f, 0.5f, 0, 0}, c.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{5.5f, 0}, c.output().toArray(), 1e-5f);
    }

    @Test
    void causalIsAlignedToTheEnd() {
        // Lq = 2, Lk = 4: query 0 sees keys 0..2, query 1 sees all four.
        AttentionOutput a = zeroQueries(1, 2, 4, AttentionMask.causal());
        assertArrayEquals(new float[]{1 / 3f, 1 / 3f, 1 / 3f, 0, 0.25f, 0.25f, 0.25f, 0.25f}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{1, 1.5f}, a.output().toArray(), 1e-6f);
    }

    @Test
    void causalTopLeftIsAlignedToTheStart() {
        AttentionOutput a = zeroQueries(1, 2, 4, AttentionMask.causalTopLeft());
        assertArrayEquals(new float[]{1, 0, 0, 0, 0.5f, 0.5f, 0, 0}, a.weights().toArray(), 1e-7f);
    }

    @Test
    void keyPaddingIsPerBatchRow() {
        AttentionOutput a = zeroQueries(2, 1, 3, AttentionMask.keyPadding(new boolean[][]{{false, true, false}, {true, true, false}}));
        assertArrayEquals(new float[]{0.5f, 0, 0.5f, 0, 0, 1}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{1, 2}, a.output().toArray(), 1e-6f);
    }

    @Test
    void paddingFromTokenIds() {
        AttentionOutput a = zeroQueries(1, 1, 4, AttentionMask.padding(new int[][]{{7, 0, 9, 0}}, 0));
        assertArrayEquals(new float[]{0.5f, 0, 0.5f, 0}, a.weights().toArray(), 1e-7f);
    }

    @Test
    void additiveLogTwoDoublesAWeight() {
        // Scores 0, 0 plus biases ln 2, 0: weights 2/3 and 1/3.
        Tensor bias = Tensor.of(new float[]{(float) Math.log(2), 0}, 1, 2);
        AttentionOutput a = zeroQueries(1, 1, 2, AttentionMask.additive(bias));
        assertArrayEquals(new float[]{2 / 3f, 1 / 3f}, a.weights().toArray(), 1e-6f);
    }

    @Test
    void additiveNegativeInfinityMasksAndKeepZeroMasks() {
        Tensor bias = Tensor.of(new float[]{0, Float.NEGATIVE_INFINITY, 0, 0}, 1, 4);
        Tensor keep = Tensor.of(new float[]{1, 1, 0, 2}, 1, 4);
        AttentionOutput a = zeroQueries(1, 1, 4, AttentionMask.additive(bias).and(AttentionMask.keep(keep)));
        assertArrayEquals(new float[]{0.5f, 0, 0, 0.5f}, a.weights().toArray(), 1e-7f);
    }

    @Test
    void rankTwoMaskBroadcastsOverBatchAndHeadsRankFourOverQueries() {
        // Rank 2 (Lq, Lk): row-specific. Rank 4 (B, 1, 1, Lk): batch-specific, same for every query.
        Tensor perRow = Tensor.of(new float[]{1, 0, 1, 1, 1, 0}, 2, 3);
        AttentionOutput a = zeroQueries(2, 2, 3, AttentionMask.keep(perRow));
        assertArrayEquals(new float[]{0.5f, 0, 0.5f, 0.5f, 0.5f, 0, 0.5f, 0, 0.5f, 0.5f, 0.5f, 0}, a.weights().toArray(), 1e-7f);
        Tensor perBatch = Tensor.of(new float[]{1, 0, 0, 0, 1, 1}, 2, 1, 1, 3);
        AttentionOutput b = zeroQueries(2, 2, 3, AttentionMask.keep(perBatch));
        assertArrayEquals(new float[]{1, 0, 0, 1, 0, 0, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f}, b.weights().toArray(), 1e-7f);
    }

    @Test
    void fullyMaskedRowGivesZeroWeightsAndZeroOutput() {
        Tensor keep = Tensor.of(new float[]{0, 0, 0, 1, 0, 1}, 2, 3);
        AttentionOutput a = zeroQueries(1, 2, 3, AttentionMask.keep(keep));
        assertArrayEquals(new float[]{0, 0, 0, 0.5f, 0, 0.5f}, a.weights().toArray(), 0f);
        assertArrayEquals(new float[]{0, 1}, a.output().toArray(), 1e-7f);
    }

    @Test
    void identityProjectionsReduceMultiHeadToScaledDotProduct() {
        // E = 2, one head of width 2, W = I, no bias: the module is plain attention on the inputs.
        float[] eye = {1, 0, 0, 1};
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(2, 1, 1, 2, 0.5f,
                eye, eye, eye, eye, null, null, null, null);
        float[] x = {1, 2, -1, 0.5f, 3, -2};
        AttentionOutput m = ReferenceAttention.multiHead(Tensor.of(x, 1, 3, 2), Tensor.of(x, 1, 3, 2), Tensor.of(x, 1, 3, 2),
                AttentionMask.causal(), p);
        AttentionOutput s = ReferenceAttention.scaledDotProduct(Tensor.of(x, 1, 1, 3, 2), Tensor.of(x, 1, 1, 3, 2),
                Tensor.of(x, 1, 1, 3, 2), AttentionMask.causal(), 0.5f);
        assertArrayEquals(s.output().toArray(), m.output().toArray(), 1e-6f);
        // Row 0 attends only itself; row 1: softmax(0.5·(x1·x0, x1·x1)) = softmax(0, 0.625).
        double w0 = 1 / (1 + Math.exp(0.625));
        assertArrayEquals(new float[]{1, 2, (float) (w0 * 1 + (1 - w0) * -1), (float) (w0 * 2 + (1 - w0) * 0.5)},
                java.util.Arrays.copyOf(m.output().toArray(), 4), 1e-6f);
    }

    @Test
    void outputBiasIsAddedAfterTheMerge() {
        float[] eye = {1, 0, 0, 1};
        float[] bo = {5, -7};
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(2, 1, 1, 2, 1f,
                eye, eye, eye, eye, new float[2], new float[2], new float[2], bo);
        Tensor x = Tensor.of(new float[]{3, 4}, 1, 1, 2);
        assertArrayEquals(new float[]{8, -3}, ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p).output().toArray(), 1e-6f);
    }

    @Test
    void rejectsBadInput() {
        float[] w = new float[4];
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ReferenceAttention.Parameters(2, 2, 3, 1, 1f, w, w, w, w, null, null, null, null));
        assertTrue(e.getMessage().startsWith("kvHeads"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new ReferenceAttention.Parameters(2, 1, 1, 2, 1f, new float[3], w, w, w, null, null, null, null));
        assertTrue(e.getMessage().startsWith("wq"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> ReferenceAttention.scaledDotProduct(Tensor.zeros(1, 2, 1), Tensor.zeros(1, 1, 1, 1), Tensor.zeros(1, 1, 1, 1), AttentionMask.none(), 1f));
        assertTrue(e.getMessage().startsWith("q"), e.getMessage());
        assertThrows(NullPointerException.class,
                () -> ReferenceAttention.scaledDotProduct(Tensor.zeros(1, 1, 1, 1), Tensor.zeros(1, 1, 1, 1), Tensor.zeros(1, 1, 1, 1), null, 1f));
    }

    @Test
    void namesTheSingleBadTensor() {
        Tensor q = Tensor.zeros(1, 2, 3, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.scaledDotProduct(
                q, Tensor.zeros(1, 1, 5, 3), Tensor.zeros(1, 1, 5, 4), AttentionMask.none(), 1f));
        assertTrue(e.getMessage().startsWith("k: "), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.scaledDotProduct(
                q, Tensor.zeros(1, 1, 5, 4), Tensor.zeros(1, 1, 6, 4), AttentionMask.none(), 1f));
        assertTrue(e.getMessage().startsWith("v: "), e.getMessage());
        float[] w = new float[4];
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(2, 1, 1, 2, 1f, w, w, w, w, null, null, null, null);
        e = assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.multiHead(
                Tensor.zeros(1, 3, 2), Tensor.zeros(2, 5, 2), Tensor.zeros(1, 5, 2), AttentionMask.none(), p));
        assertTrue(e.getMessage().startsWith("key: "), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.multiHead(
                Tensor.zeros(1, 3, 2), Tensor.zeros(1, 5, 2), Tensor.zeros(1, 4, 2), AttentionMask.none(), p));
        assertTrue(e.getMessage().startsWith("value: "), e.getMessage());
    }

    @Test
    void rejectsWeightsPastTheLimitBeforeAllocating() {
        Tensor t = Tensor.zeros(1, 1, 46341, 1);   // 46341^2 weights > Integer.MAX_VALUE - 8
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReferenceAttention.scaledDotProduct(t, t, t, AttentionMask.none(), 1f));
        assertTrue(e.getMessage().startsWith("weights (B, H, Lq, Lk): element count of [1, 1, 46341, 46341] exceeds"),
                e.getMessage());
    }
}
