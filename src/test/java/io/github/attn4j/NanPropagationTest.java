package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A NaN (or infinity) in an input reaches exactly the outputs that depend on it: those of queries
 * that give its key a nonzero weight. Masked keys contribute nothing, even through {@code 0 · NaN}.
 * The sequences are long enough to span several key and query tiles.
 */
class NanPropagationTest {
    private static final int L = 300;
    private static final int D = 8;
    private static final float SCALE = (float) (1 / Math.sqrt(D));

    private static Tensor[] inputs(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        return new Tensor[]{uniform(random, 1, 2, L, D), uniform(random, 1, 2, L, D), uniform(random, 1, 2, L, D)};
    }

    private static Tensor poison(Tensor t, int head, int row, int col, float value) {
        float[] a = t.toArray();
        a[(head * L + row) * D + col] = value;
        return Tensor.of(a, t.shape());
    }

    /** Asserts out[h, i, c] is NaN or infinite exactly where {@code poisoned} says, and equals {@code clean} elsewhere. */
    private static void assertNonFiniteExactly(float[] clean, float[] out, Where poisoned) {
        for (int h = 0; h < 2; h++) {
            for (int i = 0; i < L; i++) {
                for (int c = 0; c < D; c++) {
                    int at = (h * L + i) * D + c;
                    if (poisoned.at(h, i, c)) {
                        assertTrue(!Float.isFinite(out[at]), "expected NaN or an infinity at head " + h + ", query " + i + ", column " + c);
                    } else {
                        assertEquals(clean[at], out[at], 0f, "head " + h + ", query " + i + ", column " + c);
                    }
                }
            }
        }
    }

    @FunctionalInterface
    private interface Where {
        boolean at(int head, int query, int column);
    }

    @Test
    void nanInAValueRowReachesOnlyQueriesThatSeeThatKey() {
        Tensor[] x = inputs(1);
        float[] clean = ScaledDotProductAttention.apply(x[0], x[1], x[2], AttentionMask.causal()).toArray();
        float[] cleanWithWeights = ScaledDotProductAttention.applyWithWeights(x[0], x[1], x[2], AttentionMask.causal(), SCALE)
                .output().toArray();
        for (float bad : new float[]{Float.NaN, Float.POSITIVE_INFINITY}) {
            Tensor v = poison(x[2], 1, 150, 5, bad);
            float[] out = ScaledDotProductAttention.apply(x[0], x[1], v, AttentionMask.causal()).toArray();
            assertNonFiniteExactly(clean, out, (h, i, c) -> h == 1 && i >= 150 && c == 5);
            float[] withWeights = ScaledDotProductAttention.applyWithWeights(x[0], x[1], v, AttentionMask.causal(), SCALE)
                    .output().toArray();
            assertNonFiniteExactly(cleanWithWeights, withWeights, (h, i, c) -> h == 1 && i >= 150 && c == 5);
        }
    }

    @Test
    void nanInAKeyRowReachesWholeRowsOfQueriesThatSeeThatKey() {
        Tensor[] x = inputs(2);
        float[] clean = ScaledDotProductAttention.apply(x[0], x[1], x[2], AttentionMask.causal()).toArray();
        Tensor k = poison(x[1], 0, 250, 3, Float.NaN);
        float[] out = ScaledDotProductAttention.apply(x[0], k, x[2], AttentionMask.causal()).toArray();
        assertNonFiniteExactly(clean, out, (h, i, c) -> h == 0 && i >= 250);
    }

    @Test
    void maskedKeysNeverLeakNan() {
        Tensor[] x = inputs(3);
        boolean[][] padded = new boolean[1][L];
        padded[0][150] = true;
        float[] additive = new float[L * L];
        for (int i = 0; i < L; i++) {
            additive[i * L + 150] = Float.NEGATIVE_INFINITY;
        }
        AttentionMask[] masks = {AttentionMask.keyPadding(padded), AttentionMask.additive(Tensor.of(additive, L, L)),
                AttentionMask.causal().and(AttentionMask.keyPadding(padded))};
        for (AttentionMask mask : masks) {
            float[] clean = ScaledDotProductAttention.apply(x[0], x[1], x[2], mask).toArray();
            float[] cleanWithWeights = ScaledDotProductAttention.applyWithWeights(x[0], x[1], x[2], mask, SCALE)
                    .output().toArray();
            Tensor k = poison(x[1], 1, 150, 0, Float.NaN);
            Tensor v = poison(x[2], 1, 150, 5, Float.NaN);
            assertNonFiniteExactly(clean, ScaledDotProductAttention.apply(x[0], k, v, mask).toArray(), (h, i, c) -> false);
            assertNonFiniteExactly(cleanWithWeights, ScaledDotProductAttention.applyWithWeights(x[0], k, v, mask, SCALE).output().toArray(),
                    (h, i, c) -> false);
        }
    }

    @Test
    void aPaddedNanTokenDoesNotReachTheModuleOutput() {
        SplittableRandom random = new SplittableRandom(4);
        MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(5).build();
        Tensor query = uniform(random, 2, 7, 16);
        float[] memory = uniform(random, 2, 140, 16).toArray();
        boolean[][] padded = new boolean[2][140];
        java.util.Arrays.fill(padded[1], 130, 140, true);
        float[] clean = m.forward(query, Tensor.of(memory, 2, 140, 16), Tensor.of(memory, 2, 140, 16),
                AttentionMask.keyPadding(padded)).toArray();
        for (int t = 130; t < 140; t++) {
            java.util.Arrays.fill(memory, (140 + t) * 16, (141 + t) * 16, Float.NaN);   // padding of batch row 1
        }
        Tensor poisoned = Tensor.of(memory, 2, 140, 16);
        float[] out = m.forward(query, poisoned, poisoned, AttentionMask.keyPadding(padded)).toArray();
        for (int i = 0; i < clean.length; i++) {
            assertEquals(clean[i], out[i], 0f, "element " + i);
        }
    }
}
