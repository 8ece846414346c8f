package io.github.attn4j.internal.kernel;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The random rows and the checks shared by {@link RowOpsAgreementTest} and
 * {@link Exp2RowsAgreementTest}: rows that mix ordinary values with NaN, infinities, signed zeros
 * and the clamping limits of the exponentials, lengths that cover every size up to three vectors
 * plus a tail, random lengths and a few long rows, at odd offsets inside padded arrays; and the
 * bound on two sums of the same non-negative terms in different orders (derived in
 * {@link RowOpsAgreementTest}).
 */
final class RowCases {
    static final double U = 0x1p-24;
    static final float[] SPECIALS = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0f, -0f,
            Float.MIN_VALUE, -Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE, 1e30f, -1e30f,
            ExpFloat.MIN_ARG, Math.nextDown(ExpFloat.MIN_ARG), Math.nextUp(ExpFloat.MIN_ARG), -100f,
            ExpFloat.MAX_ARG, Math.nextUp(ExpFloat.MAX_ARG), 89f,
            ExpFloat.EXP2_LO, -126.5f, -126f, 127f, 127.5f, ExpFloat.EXP2_HI, 200f, -200f};

    private RowCases() {
    }

    /** The vector path of this JVM; skips the test when there is none (the {@code kernels-scalar} execution). */
    static RowOps vector() {
        assumeTrue(Kernels.vectorBits() > 0, "no vector path in this JVM (" + Kernels.describe() + ")");
        return VectorKernels.rowOps();
    }

    /** A random test case: a row of {@code n} values at offset {@code off} inside padding. */
    record Row(float[] data, int off, int n) {
        float[] copy() {
            return data.clone();
        }
    }

    /** Lengths: every size up to 3 vectors + 3, then random ones, then long rows. */
    static int[] lengths(SplittableRandom random) {
        int lanes = Math.max(1, Kernels.vectorBits() / 32);
        int small = 3 * lanes + 4;
        int[] sizes = new int[small + 60 + 6];
        for (int i = 0; i < small; i++) {
            sizes[i] = i;
        }
        for (int i = 0; i < 60; i++) {
            sizes[small + i] = random.nextInt(701);
        }
        int[] longRows = {1023, 1024, 1025, 4095, 4096, 4098};
        System.arraycopy(longRows, 0, sizes, small + 60, longRows.length);
        return sizes;
    }

    /**
     * {@code n} values uniform in {@code [-range, range]}, each replaced with probability
     * {@code specialRate} by one of {@link #SPECIALS}, inside padding of 0..20 random values on
     * each side (specials included, so a stray write of any kind is seen).
     */
    static Row row(SplittableRandom random, int n, double range, double specialRate) {
        int before = random.nextInt(21), after = random.nextInt(21);
        float[] data = new float[before + n + after];
        for (int i = 0; i < data.length; i++) {
            boolean inside = i >= before && i < before + n;
            data[i] = random.nextDouble() < (inside ? specialRate : 0.2) ? SPECIALS[random.nextInt(SPECIALS.length)]
                    : (float) random.nextDouble(-range, range);
        }
        return new Row(data, before, n);
    }

    static double specialRate(SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> 0.05;
            case 1 -> 0.002;
            default -> 0;
        };
    }

    static float someShift(SplittableRandom random) {
        return random.nextInt(10) == 0 ? SPECIALS[random.nextInt(SPECIALS.length)] : (float) random.nextDouble(-5, 5);
    }

    /** Both paths' sums against each other and against the exact sum, as derived in {@link RowOpsAgreementTest}. */
    static void assertSumsAgree(float[] values, int off, int n, float scalarSum, float vectorSum, String what) {
        double exact = 0;
        boolean finite = true;
        for (int i = off; i < off + n; i++) {
            assertTrue(Float.isNaN(values[i]) || values[i] >= 0, what + ": negative exponential " + values[i]);
            finite &= Float.isFinite(values[i]);
            exact += values[i];
        }
        if (!finite) {
            assertSameBits(scalarSum, vectorSum, what + ": sum with a non-finite term");
            assertTrue(!Float.isFinite(scalarSum), what + ": sum with a non-finite term is " + scalarSum);
            return;
        }
        if (exact > Float.MAX_VALUE / 2) {
            return;
        }
        double gamma = n * U / (1 - n * U);
        double oneSide = gamma * exact + n * 0x1p-53 * exact;
        assertTrue(Math.abs(scalarSum - exact) <= oneSide,
                what + ": scalar sum " + scalarSum + " vs exact " + exact + " (bound " + oneSide + ")");
        assertTrue(Math.abs(vectorSum - exact) <= oneSide,
                what + ": vector sum " + vectorSum + " vs exact " + exact + " (bound " + oneSide + ")");
        assertTrue(Math.abs((double) scalarSum - vectorSum) <= 2 * oneSide,
                what + ": scalar sum " + scalarSum + " vs vector sum " + vectorSum + " (bound " + 2 * oneSide + ")");
    }

    /** Padding around the row is as it was. */
    static void assertUntouched(Row r, float[] after, String what) {
        float[] before = r.data();
        for (int i = 0; i < before.length; i++) {
            if (i < r.off() || i >= r.off() + r.n()) {
                assertEquals(Float.floatToIntBits(before[i]), Float.floatToIntBits(after[i]), what + ": wrote padding at " + i);
            }
        }
    }

    static void assertSameBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(actual[i])) {
                throw new AssertionError(what + ": element " + i + ": scalar " + expected[i] + " vs vector " + actual[i]);
            }
        }
    }

    static void assertSameBits(float expected, float actual, String what) {
        if (Float.floatToIntBits(expected) != Float.floatToIntBits(actual)) {
            throw new AssertionError(what + ": scalar " + expected + " vs vector " + actual);
        }
    }

    static float[] concat(float[] a, float[] b) {
        float[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
