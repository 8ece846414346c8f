package io.github.attn4j;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The textbook TensorFlow walk-through of scaled dot-product attention, with expected values
 * derived by hand: scores are q·kⱼ / √3, and a gap of 100/√3 ≈ 57.7 between the top score and
 * the rest makes the softmax one-hot to within e^-57.7 ≈ 1e-25.
 */
class TextbookExampleTest {
    private static final float[] KEYS = {10, 0, 0, 0, 10, 0, 0, 0, 10, 0, 0, 10};
    private static final float[] VALUES = {1, 0, 10, 0, 100, 5, 1000, 6};

    private static AttentionOutput attend(float... query) {
        Tensor q = Tensor.of(query, 1, 1, 1, 3);
        Tensor k = Tensor.of(KEYS, 1, 1, 4, 3);
        Tensor v = Tensor.of(VALUES, 1, 1, 4, 2);
        return ScaledDotProductAttention.applyWithWeights(q, k, v, AttentionMask.none(), (float) (1 / Math.sqrt(3)));
    }

    @Test
    void queryMatchingOneKeyCopiesItsValue() {
        AttentionOutput out = attend(0, 10, 0);
        assertArrayEquals(new float[]{0, 1, 0, 0}, out.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{10, 0}, out.output().toArray(), 1e-5f);
    }

    @Test
    void queryMatchingTwoEqualKeysAveragesTheirValues() {
        // Keys 2 and 3 both score 100/√3: weights 1/2 each; output (100 + 1000)/2, (5 + 6)/2.
        AttentionOutput out = attend(0, 0, 10);
        assertArrayEquals(new float[]{0, 0, 0.5f, 0.5f}, out.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{550, 5.5f}, out.output().toArray(), 1e-3f);
    }

    @Test
    void queryBetweenTwoKeysAveragesThem() {
        AttentionOutput out = attend(10, 10, 0);
        assertArrayEquals(new float[]{0.5f, 0.5f, 0, 0}, out.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{5.5f, 0}, out.output().toArray(), 1e-5f);
    }

    @Test
    void unweightedPathGivesTheSameOutput() {
        Tensor q = Tensor.of(new float[]{0, 10, 0, 0, 0, 10, 10, 10, 0}, 1, 1, 3, 3);
        Tensor out = ScaledDotProductAttention.apply(q, Tensor.of(KEYS, 1, 1, 4, 3), Tensor.of(VALUES, 1, 1, 4, 2),
                AttentionMask.none());
        assertArrayEquals(new float[]{10, 0, 550, 5.5f, 5.5f, 0}, out.toArray(), 1e-3f);
    }
}
