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
