package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** The materialized softmax row and the mask's key ranges and transforms against softmax computed naively in double in this test. */
class SoftmaxTest {
    private static final int[] EDGE_SIZES = {1, 2, 13, 15, 16, 17, 31, 33, 207, 4098};

    @Test
    void rowsMatchNaiveSoftmaxOnRandomShapes() {
        qt().withExamples(300).forAll(integers().between(1, 300), integers().between(0, 2), longs().all())
                .checkAssert((cols, sinkKind, seed) -> checkRow(cols, sinkKind, seed));
    }

    @Test
    void rowsMatchNaiveSoftmaxOnEdgeSizes() {
        for (int cols : EDGE_SIZES) {
            checkRow(cols, 0, cols);
            checkRow(cols, 1, cols);
        }
    }

    @Test
    void largeLogitsDoNotOverflow() {
        float[] x = {3000f, 2999f, -5000f};
        Softmax.normalize(x, 0, 3, Float.NEGATIVE_INFINITY);
        double e = Math.exp(-1);
        assertEquals(1 / (1 + e), x[0], 1e-6);
        assertEquals(e / (1 + e), x[1], 1e-6);
        assertEquals(0f, x[2]);
    }

    @Test
    void aSinkOfLogNHalvesNEqualWeights() {
        float[] x = new float[8];
        Softmax.normalize(x, 0, 8, (float) Math.log(8));
        for (float v : x) {
            assertEquals(1.0 / 16, v, 1e-7);
        }
    }

    @Test
    void allNegativeInfinityRowBecomesZerosSinkOrNot() {
        for (float sink : new float[]{Float.NEGATIVE_INFINITY, 0f, 30f}) {
            float[] x = new float[20];
            java.util.Arrays.fill(x, Float.NEGATIVE_INFINITY);
            Softmax.normalize(x, 0, 20, sink);
            for (float v : x) {
                assertEquals(0f, v);
            }
        }
    }

    @Test
    void maskTransformMatchesNaiveBiasAndMask() {
        qt().withExamples(300).forAll(integers().between(1, 20), integers().between(1, 300), integers().between(1, 40), longs().all())
                .checkAssert((rows, cols, window, seed) -> checkTransform(rows, cols, window, seed));
    }

    @Test
    void maskTransformOnEdgeSizes() {
        for (int cols : EDGE_SIZES) {
            checkTransform(4, cols, 3, cols);
        }
    }

    /** One row, with no sink, a sink of 0, or a sink above every score, against a naive double softmax. */
    private static void checkRow(int cols, int sinkKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] x = new float[cols + 2];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextDouble(-20, 20);
        }
        float sink = sinkKind == 0 ? Float.NEGATIVE_INFINITY : sinkKind == 1 ? 0f : 25f;
        float[] original = x.clone();
        Softmax.normalize(x, 1, cols, sink);
        double max = sink;
        for (int j = 0; j < cols; j++) {
            max = Math.max(max, original[1 + j]);
        }
        double sum = Math.exp(sink - max);
        for (int j = 0; j < cols; j++) {
            sum += Math.exp(original[1 + j] - max);
        }
        for (int j = 0; j < cols; j++) {
            double expected = Math.exp(original[1 + j] - max) / sum;
            assertEquals(expected, x[1 + j], 2e-6 + 2e-6 * expected, "col " + j);
        }
        assertEquals(original[0], x[0], "before the row: untouched");
        assertEquals(original[cols + 1], x[cols + 1], "after the row: untouched");
    }

    /**
     * Key ranges (causal and sliding window), ALiBi, a rank-2 keep mask and a per-row additive
     * bias from {@link ScoreMask}, then softmax, against a naive double computation of the same rules.
     */
    private static void checkTransform(int rows, int cols, int window, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] x = new float[rows * cols];
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
        float slope = 0.25f;
        int origin = cols - rows;
        ScoreMask mask = new ScoreMask(1, new int[]{origin}, new int[]{rows}, new int[]{origin}, window, new float[]{slope},
                List.of(new ScoreMask.RowSource(keep, 0, 0, 0, cols)),
                List.of(new ScoreMask.RowSource(bias, 0, 0, 0, 0)));
        float[] original = x.clone();
        for (int r = 0; r < rows; r++) {
            int lo = Math.min(mask.keyStart(0, r), mask.keyEnd(0, r, cols));
            int hi = mask.keyEnd(0, r, cols);
            java.util.Arrays.fill(x, r * cols, r * cols + lo, 0f);
            java.util.Arrays.fill(x, r * cols + hi, (r + 1) * cols, 0f);
            if (hi > lo) {
                mask.transform(x, r * cols + lo, hi - lo, 0, 0, r, lo, 1f);
                Softmax.normalize(x, r * cols + lo, hi - lo, Float.NEGATIVE_INFINITY);
            }
            double[] masked = new double[cols];
            for (int j = 0; j < cols; j++) {
                int pos = origin + r;
                boolean forbidden = j > pos || Math.abs(pos - j) >= window || keep[r * cols + j] == 0f;
                masked[j] = forbidden ? Double.NEGATIVE_INFINITY : original[r * cols + j] + bias[j] - slope * Math.abs(pos - j);
            }
            double[] expected = softmax(masked);
            for (int j = 0; j < cols; j++) {
                assertEquals(expected[j], x[r * cols + j], 2e-6 + 2e-6 * expected[j], "row " + r + " col " + j);
            }
        }
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
