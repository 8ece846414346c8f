package io.github.attn4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Comparison of float results with a double-precision reference. The bound grows with the
 * reduction length n: float rounding adds at most about n·ε relative error to a sum of n
 * products, so |actual − expected| ≤ 4·ε·n·(1 + max|expected|) with ε = 2⁻²³.
 */
public final class Tolerance {
    /** ε = 2⁻²³, the spacing of floats just above 1. */
    public static final double EPS = Math.ulp(1f);

    private Tolerance() {
    }

    /**
     * Extra reduction length for the biases {@code mask} adds to scores of {@code lq} queries
     * over {@code lk} keys: {@code ceil} of the largest |bias| it can add (ALiBi
     * {@code slope · |i' - j|} up to {@code slope · max(Lq, Lk) - 1}, additive tensors their largest
     * finite |value|, summed over the parts). A kernel adds a bias to a float score, rounding the
     * sum to within ε of the logit's magnitude M (the reference keeps it exact). An error δ ≤ ε·M
     * in every score moves each softmax weight by a factor within 2δ of 1, so an output over values
     * in [-1, 1] by at most 2·ε·M, within M more terms of {@link #bound}; the weights likewise.
     */
    public static int maskBiasTerms(AttentionMask mask, int lq, int lk) {
        double m = 0;
        for (AttentionMask.Part part : mask.parts()) {
            switch (part) {
                case AttentionMask.Alibi a -> {
                    double slope = 0;
                    for (int h = 0; h < a.heads(); h++) {
                        slope = Math.max(slope, Math.abs(a.slope(h)));
                    }
                    m += slope * (Math.max(lq, lk) - 1);
                }
                case AttentionMask.Additive add -> {
                    double max = 0;
                    for (float v : add.bias().toArray()) {
                        if (Float.isFinite(v)) {
                            max = Math.max(max, Math.abs(v));
                        }
                    }
                    m += max;
                }
                default -> {
                }
            }
        }
        return (int) Math.ceil(m);
    }

    /** The bound 4·ε·max(1, n)·(1 + max|expected|), ignoring non-finite expected values. */
    public static double bound(int reductionLength, float[] expected) {
        double max = 0;
        for (float v : expected) {
            if (Float.isFinite(v)) {
                max = Math.max(max, Math.abs(v));
            }
        }
        return 4 * EPS * Math.max(1, reductionLength) * (1 + max);
    }

    /** Fails unless every element lies within {@link #bound} of the expected one (NaN never does). */
    public static void assertClose(float[] expected, float[] actual, int reductionLength, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        double tol = bound(reductionLength, expected);
        for (int i = 0; i < expected.length; i++) {
            double diff = Math.abs((double) expected[i] - actual[i]);
            if (!(diff <= tol)) {
                fail(what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i] + " (|diff| " + diff
                        + " > tolerance " + tol + " for reduction length " + reductionLength + ")");
            }
        }
    }
}
