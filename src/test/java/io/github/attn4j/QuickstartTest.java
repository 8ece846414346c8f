package io.github.attn4j;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README quickstart, line for line: ten ragged rows padded to 20, width 512, 8 heads. */
class QuickstartTest {
    @Test
    void textbookShapes() {
        int vocab = 1000, embedDim = 512, heads = 8;
        java.util.Random random = new java.util.Random(1);

        int[][] ragged = new int[10][];
        for (int b = 0; b < 10; b++) {
            ragged[b] = random.ints(b == 0 ? 20 : 1 + random.nextInt(20), 1, vocab).toArray();
        }
        int[][] ids = Embedding.pad(ragged, 0);

        float[] table = new float[vocab * embedDim];
        for (int i = 0; i < table.length; i++) table[i] = (float) random.nextGaussian();
        Tensor x = Embedding.of(table, vocab, embedDim).lookup(ids);

        MultiHeadAttention mha = MultiHeadAttention.builder(embedDim, heads).seed(0).build();
        Tensor y = mha.forward(x, AttentionMask.padding(ids, 0));

        AttentionOutput withWeights = mha.forwardWithWeights(x, x, x, AttentionMask.padding(ids, 0));
        Tensor weights = withWeights.weights();

        assertEquals(20, ids[0].length);
        assertArrayEquals(new int[]{10, 20, 512}, x.shape());
        assertArrayEquals(new int[]{10, 20, 512}, y.shape());
        assertArrayEquals(new int[]{10, 8, 20, 20}, weights.shape());
        assertArrayEquals(y.toArray(), withWeights.output().toArray(), 1e-4f);
        for (int b = 0; b < 10; b++) {
            for (int j = 0; j < 20; j++) {
                boolean pad = ids[b][j] == 0;
                assertEquals(j >= ragged[b].length, pad);
                for (int h = 0; h < heads; h++) {
                    for (int i = 0; i < 20; i++) {
                        float w = weights.get(b, h, i, j);
                        assertTrue(pad ? w == 0f : w > 0f, "weight of key " + j + " in row " + b);
                    }
                }
            }
        }
        for (float v : y.toArray()) {
            assertTrue(Float.isFinite(v));
        }
    }
}
