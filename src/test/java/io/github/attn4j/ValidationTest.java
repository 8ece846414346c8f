package io.github.attn4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every public entry point rejects bad input with a message naming the argument, the expected and the actual value. */
class ValidationTest {

    private static void rejects(Executable call, String... fragments) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), () -> "message '" + e.getMessage() + "' should contain '" + f + "'");
        }
    }

    private static void rejectsNull(Executable call, String argument) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(argument),
                () -> "message '" + e.getMessage() + "' should name '" + argument + "'");
    }

    private static Tensor t(int... shape) {
        return Tensor.zeros(shape);
    }

    // ---- Tensor

    @Test
    void tensorRejectsLengthMismatch() {
        rejects(() -> Tensor.of(new float[5], 2, 3), "data", "length 6", "length 5");
    }

    @Test
    void tensorRejectsNegativeDimsAndEmptyShape() {
        rejects(() -> Tensor.zeros(2, -1), "shape", "non-negative", "[2, -1]");
        rejects(() -> Tensor.zeros(), "shape", "at least one dimension");
    }

    @Test
    void tensorRejectsElementCountPastIntMax() {
        rejects(() -> Tensor.zeros(65536, 65536), "shape", "exceeds the limit of 2147483639 elements");
        rejects(() -> Tensor.of(new float[4], 1 << 16, 1 << 16, 0, 4), "data", "length 0");
    }

    @Test
    void tensorRejectsNulls() {
        rejectsNull(() -> Tensor.of((float[]) null, 1), "data");
        rejectsNull(() -> Tensor.of((java.lang.foreign.MemorySegment) null, 1), "segment");
        rejectsNull(() -> Tensor.of(new float[1], (int[]) null), "shape");
        rejectsNull(() -> t(1).get((int[]) null), "index");
    }

    @Test
    void tensorRejectsBadIndexAndAxis() {
        rejects(() -> t(2, 3).get(1, 3), "index", "[0, 3)", "[1, 3]");
        rejects(() -> t(2, 3).get(1), "index", "2 coordinates", "1 coordinates");
        rejects(() -> t(2, 3).dim(2), "axis", "[-2, 2)", "2");
        rejects(() -> t(2, 3).reshape(4, 2), "newShape", "element count 6", "[4, 2]");
    }

    // ---- AttentionMask

    @Test
    void maskRejectsBadRanks() {
        rejects(() -> AttentionMask.keep(t(3)), "keep", "rank 2", "[3]");
        rejects(() -> AttentionMask.additive(t(1, 2, 3)), "bias", "rank 4", "[1, 2, 3]");
    }

    @Test
    void maskRejectsRaggedPadding() {
        rejects(() -> AttentionMask.keyPadding(new boolean[][]{new boolean[3], new boolean[2]}), "padded[1]", "length 3", "length 2");
        rejects(() -> AttentionMask.padding(new int[][]{{1, 2}, {1}}, 0), "tokenIds[1]", "length 2", "length 1");
    }

    @Test
    void maskRejectsNulls() {
        rejectsNull(() -> AttentionMask.keyPadding(null), "padded");
        rejectsNull(() -> AttentionMask.keyPadding(new boolean[][]{null}), "padded[0]");
        rejectsNull(() -> AttentionMask.padding(null, 0), "tokenIds");
        rejectsNull(() -> AttentionMask.keep(null), "keep");
        rejectsNull(() -> AttentionMask.additive(null), "bias");
        rejectsNull(() -> AttentionMask.none().and(null), "other");
    }

    @Test
    void maskThatDoesNotBroadcastIsRejectedByTheCall() {
        Tensor q = t(2, 4, 5, 8), k = t(2, 4, 7, 8), v = t(2, 4, 7, 8);
        rejects(() -> ScaledDotProductAttention.apply(q, k, v, AttentionMask.keep(t(5, 6))),
                "mask.keep", "(5 or 1, 7)", "[5, 6]");
        rejects(() -> ScaledDotProductAttention.apply(q, k, v, AttentionMask.additive(t(2, 3, 5, 7))),
                "mask.additive", "(2 or 1, 4 or 1, 5 or 1, 7)", "[2, 3, 5, 7]");
        rejects(() -> ScaledDotProductAttention.apply(q, k, v, AttentionMask.keyPadding(new boolean[3][7])),
                "mask.keyPadding", "2 rows", "3 rows");
        rejects(() -> ScaledDotProductAttention.apply(q, k, v, AttentionMask.keyPadding(new boolean[2][6])),
                "mask.keyPadding", "7 keys", "6 keys");
    }

    // ---- ScaledDotProductAttention

    @Test
    void sdpaRejectsWrongRanksAndShapes() {
        rejects(() -> ScaledDotProductAttention.apply(t(4, 5, 8), t(1, 4, 7, 8), t(1, 4, 7, 8), AttentionMask.none()),
                "q", "rank 4", "[4, 5, 8]");
        rejects(() -> ScaledDotProductAttention.apply(t(1, 4, 5, 8), t(1, 4, 7, 6), t(1, 4, 7, 8), AttentionMask.none()),
                "k", "head width d (from q) = 8", "[1, 4, 7, 6]");
        rejects(() -> ScaledDotProductAttention.apply(t(1, 4, 5, 8), t(1, 4, 7, 8), t(1, 4, 6, 8), AttentionMask.none()),
                "v", "key length Lk (from k) = 7", "[1, 4, 6, 8]");
        rejects(() -> ScaledDotProductAttention.apply(t(1, 4, 5, 8), t(2, 4, 7, 8), t(2, 4, 7, 8), AttentionMask.none()),
                "k", "batch B (from q) = 1", "[2, 4, 7, 8]");
    }

    @Test
    void sdpaRejectsHeadsNotDivisibleByKvHeads() {
        rejects(() -> ScaledDotProductAttention.apply(t(1, 4, 5, 8), t(1, 3, 7, 8), t(1, 3, 7, 8), AttentionMask.none()),
                "k", "divides the 4 query heads", "3");
    }

    @Test
    void sdpaRejectsNullsAndBadScale() {
        rejectsNull(() -> ScaledDotProductAttention.apply(null, t(1, 1, 1, 1), t(1, 1, 1, 1), AttentionMask.none()), "q");
        rejectsNull(() -> ScaledDotProductAttention.apply(t(1, 1, 1, 1), t(1, 1, 1, 1), t(1, 1, 1, 1), null, 1f), "mask");
        rejects(() -> ScaledDotProductAttention.apply(t(1, 1, 1, 1), t(1, 1, 1, 1), t(1, 1, 1, 1), AttentionMask.none(), Float.NaN),
                "scale", "finite", "NaN");
    }

    @Test
    void sdpaRejectsWeightsPastIntMax() {
        // 16 heads x 12000 x 12000 = 2.3e9 weights: rejected before anything that large is allocated.
        Tensor q = t(1, 16, 12000, 1), k = t(1, 16, 12000, 1);
        rejects(() -> ScaledDotProductAttention.applyWithWeights(q, k, k, AttentionMask.none(), 1f),
                "weights", "exceeds the limit of 2147483639 elements");
    }

    // ---- Embedding

    @Test
    void embeddingRejectsBadTable() {
        rejects(() -> Embedding.of(new float[10], 3, 4), "table", "length 12", "got 10");
        rejects(() -> Embedding.of(new float[0], 0, 4), "vocabSize", "positive", "0");
        rejects(() -> Embedding.of(new float[4], 4, 0), "dim", "positive", "0");
        rejectsNull(() -> Embedding.of(null, 1, 1), "table");
    }

    @Test
    void embeddingRejectsRaggedAndOutOfRangeIds() {
        Embedding e = Embedding.of(new float[12], 3, 4);
        rejects(() -> e.lookup(new int[][]{{0, 1}, {2}}), "tokenIds[1]", "length 2", "length 1");
        rejects(() -> e.lookup(new int[][]{{0, 3}}), "tokenIds[0][1]", "[0, 3)", "got 3");
        rejects(() -> e.lookup(new int[][]{{-1}}), "tokenIds[0][0]", "[0, 3)", "got -1");
        rejectsNull(() -> e.lookup(null), "tokenIds");
        rejectsNull(() -> e.lookup(new int[][]{null}), "tokenIds[0]");
        rejectsNull(() -> Embedding.pad(new int[][]{{1}, null}, 0), "ragged[1]");
    }

    @Test
    void embeddingRejectsResultPastIntMax() {
        Embedding e = Embedding.of(new float[1 << 16], 1, 1 << 16);
        int[][] ids = new int[1 << 16][1];
        rejects(() -> e.lookup(ids), "lookup result", "exceeds the limit of 2147483639 elements");
    }

    // ---- MultiHeadAttention

    @Test
    void builderRejectsIndivisibleEmbedDimAndKvHeads() {
        rejects(() -> MultiHeadAttention.builder(10, 4).build(), "embedDim", "multiple of numHeads = 4", "10");
        rejects(() -> MultiHeadAttention.builder(8, 4).kvHeads(3).build(), "kvHeads", "divisor of numHeads = 4", "3");
        rejects(() -> MultiHeadAttention.builder(0, 4), "embedDim", "positive", "0");
        rejects(() -> MultiHeadAttention.builder(8, -1), "numHeads", "positive", "-1");
        rejects(() -> MultiHeadAttention.builder(8, 2).headDim(0), "headDim", "positive", "0");
    }

    @Test
    void builderRejectsWrongWeightAndBiasLengths() {
        float[] w = new float[64], wkv = new float[32];
        rejects(() -> MultiHeadAttention.builder(8, 2).weights(new float[63], w, w, w).build(), "wq", "length 64", "got 63");
        rejects(() -> MultiHeadAttention.builder(8, 2).kvHeads(1).weights(w, w, wkv, w).build(), "wk", "length 32", "got 64");
        rejects(() -> MultiHeadAttention.builder(8, 2).weights(w, w, w, new float[8]).build(), "wo", "length 64", "got 8");
        rejects(() -> MultiHeadAttention.builder(8, 2).biases(new float[8], new float[8], new float[8], new float[7]).build(),
                "bo", "length 8", "got 7");
        rejects(() -> MultiHeadAttention.builder(8, 2).bias(false).biases(new float[8], new float[8], new float[8], new float[8]).build(),
                "biases", "bias(false)");
        rejectsNull(() -> MultiHeadAttention.builder(8, 2).weights(w, null, w, w), "wk");
    }

    @Test
    void builderRejectsWeightsPastIntMax() {
        rejects(() -> MultiHeadAttention.builder(50000, 1).build(), "exceeds the limit of 2147483639 elements");
    }

    @Test
    void forwardRejectsWrongShapes() {
        MultiHeadAttention m = MultiHeadAttention.builder(8, 2).build();
        rejects(() -> m.forward(t(1, 3, 8, 1), AttentionMask.none()), "query", "rank 3", "[1, 3, 8, 1]");
        rejects(() -> m.forward(t(1, 3, 6), AttentionMask.none()), "query", "embedDim E = 8", "[1, 3, 6]");
        rejects(() -> m.forward(t(1, 3, 8), t(2, 4, 8), t(2, 4, 8), AttentionMask.none()), "key", "batch B (from query) = 1", "[2, 4, 8]");
        rejects(() -> m.forward(t(1, 3, 8), t(1, 4, 8), t(1, 5, 8), AttentionMask.none()), "value", "key length Lk (from key) = 4", "[1, 5, 8]");
        rejects(() -> m.forward(t(1, 3, 8), AttentionMask.keep(t(3, 4))), "mask.keep", "(3 or 1, 3)", "[3, 4]");
        rejectsNull(() -> m.forward(null, AttentionMask.none()), "query");
        rejectsNull(() -> m.forward(t(1, 3, 8), null), "mask");
    }

    @Test
    void forwardWithWeightsRejectsWeightsPastIntMax() {
        MultiHeadAttention m = MultiHeadAttention.builder(16, 16).build();
        Tensor x = t(1, 12000, 16);
        rejects(() -> m.forwardWithWeights(x, x, x, AttentionMask.none()), "weights", "exceeds the limit of 2147483639 elements");
    }
}
