package io.github.attn4j.kernel;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** Softmax kernels against softmax computed naively in double in this test. */
class SoftmaxTest {
    private static final int[] EDGE_SIZES = {1, 2, 13, 15, 16, 17, 31, 33, 207, 4098};

    @Test
    void rowsMatchNaiveSoftmaxOnRandomShapes() {
        qt().withExamples(300).forAll(integers().between(1, 12), integers().between(1, 300), integers().between(0, 5), longs().all())
                .checkAssert((rows, cols, pad, seed) -> checkRows(rows, cols, cols + pad, seed));
    }

    @Test
    void rowsMatchNaiveSoftmaxOnEdgeSizes() {
        for (int cols : EDGE_SIZES) {
            checkRows(3, cols, cols + 1, cols);
        }
    }

    @Test
    void largeLogitsDoNotOverflow() {
        float[] x = {3000f, 2999f, -5000f};
        Softmax.rows(x, 0, 1, 3, 3);
        double e = Math.exp(-1);
        assertEquals(1 / (1 + e), x[0], 1e-6);
        assertEquals(e / (1 + e), x[1], 1e-6);
        assertEquals(0f, x[2]);
    }

    @Test
    void allNegativeInfinityRowBecomesZeros() {
        float[] x = new float[40];
        java.util.Arrays.fill(x, Float.NEGATIVE_INFINITY);
        Softmax.rows(x, 0, 2, 20, 20);
        for (float v : x) {
            assertEquals(0f, v);
        }
    }

    @Test
    void fusedPassMatchesNaiveScaleMaskSoftmax() {
        qt().withExamples(300).forAll(integers().between(1, 20), integers().between(1, 300), integers().between(-3, 3), longs().all())
                .checkAssert((rows, cols, shift, seed) -> checkFused(rows, cols, shift, seed));
    }

    @Test
    void fusedPassOnEdgeSizes() {
        for (int cols : EDGE_SIZES) {
            checkFused(4, cols, 0, cols);
        }
    }

    @Test
    void rejectsRowsOutsideTheArray() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Softmax.rows(new float[10], 0, 2, 6, 6));
        assertTrue(e.getMessage().startsWith("x:"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Softmax.rows(new float[10], 0, 2, 5, 4));
        assertThrows(IllegalArgumentException.class, () -> Softmax.rows(new float[10], -1, 1, 5, 5));
        assertThrows(NullPointerException.class, () -> Softmax.rows(null, 0, 1, 1, 1));
    }

    private static void checkRows(int rows, int cols, int ld, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] x = new float[rows * ld + 3];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextDouble(-20, 20);
        }
        float[] original = x.clone();
        Softmax.rows(x, 0, rows, cols, ld);
        for (int r = 0; r < rows; r++) {
            double[] expected = naiveSoftmax(original, r * ld, cols, 1.0, null);
            for (int j = 0; j < cols; j++) {
                assertEquals(expected[j], x[r * ld + j], 2e-6 + 2e-6 * expected[j], "row " + r + " col " + j);
            }
            for (int j = cols; j < ld && r * ld + j < x.length; j++) {
                assertEquals(original[r * ld + j], x[r * ld + j], "padding between rows must be untouched");
            }
        }
    }

    /** Fused pass with a causal limit, a rank-2 keep mask and a per-row additive bias, against a naive double computation. */
    private static void checkFused(int rows, int cols, int shift, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int ld = cols + 2;
        float[] x = new float[rows * ld];
        float[] keep = new float[rows * cols];
        float[] bias = new float[cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextDouble(-10, 10);
        }
        for (int i = 0; i < keep.length; i++) {
            keep[i] = random.nextInt(5) == 0 ? 0f : 1f;
        }
        for (int j = 0; j < cols; j++) {
            bias[j] = random.nextInt(7) == 0 ? Float.NEGATIVE_INFINITY : (float) random.nextDouble(-2, 2);
        }
        float scale = 0.37f;
        ScoreMask mask = new ScoreMask(true, shift,
                List.of(new ScoreMask.RowSource(keep, 0, 0, 0, cols)),
                List.of(new ScoreMask.RowSource(bias, 0, 0, 0, 0)));
        float[] original = x.clone();
        Softmax.scaleMaskRows(x, 0, rows, cols, ld, mask, 0, 0, 0, scale);
        for (int r = 0; r < rows; r++) {
            double[] masked = new double[cols];
            for (int j = 0; j < cols; j++) {
                boolean forbidden = j > r + shift || keep[r * cols + j] == 0f;
                masked[j] = forbidden ? Double.NEGATIVE_INFINITY : (double) scale * original[r * ld + j] + bias[j];
            }
            double[] expected = softmax(masked);
            for (int j = 0; j < cols; j++) {
                assertEquals(expected[j], x[r * ld + j], 2e-6 + 2e-6 * expected[j], "row " + r + " col " + j);
            }
        }
    }

    private static double[] naiveSoftmax(float[] x, int off, int n, double scale, double[] bias) {
        double[] v = new double[n];
        for (int j = 0; j < n; j++) {
            v[j] = scale * x[off + j] + (bias == null ? 0 : bias[j]);
        }
        return softmax(v);
    }

    private static double[] softmax(double[] v) {
        double max = Double.NEGATIVE_INFINITY;
        for (double d : v) {
            max = Math.max(max, d);
        }
        double[] out = new double[v.length];
        if (max == Double.NEGATIVE_INFINITY) {
            return out;
        }
        double sum = 0;
        for (int j = 0; j < v.length; j++) {
            out[j] = Math.exp(v[j] - max);
            sum += out[j];
        }
        for (int j = 0; j < v.length; j++) {
            out[j] /= sum;
        }
        return out;
    }
}
