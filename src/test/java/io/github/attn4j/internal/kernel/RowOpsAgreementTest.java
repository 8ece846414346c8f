package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The two implementations of {@link RowOps} side by side in one JVM, on the same random rows (in
 * the manner of Lucene's tests that run every implementation of an interface against the others):
 * {@link ScalarRowOps} against {@link VectorRowOps} at this JVM's vector width. The surefire
 * executions {@code kernels-128}, {@code kernels-256} and {@code kernels-512} force each width
 * (a width above the hardware's runs correctly, only slowly), so every width is compared; the
 * {@code kernels-scalar} execution has no vector path and skips this test.
 *
 * <p>What must agree, and how exactly:
 * <ul>
 *   <li>Every element a method writes is bit-identical (NaN compared as NaN, whatever its payload):
 *       {@link ExpFloat#exp}, {@link ExpFloat#exp2} and {@link ExpFloat#tanh} (the soft-cap) are
 *       one lane of the vector forms, and scaling, {@code fma} bias, the ALiBi distance bias and
 *       masking are single IEEE operations per element. Elements
 *       outside {@code [off, off + n)} are never written.</li>
 *   <li>{@link RowOps#max}, {@link RowOps#anyAbove}, {@link RowOps#anyNonFinite} and
 *       {@link RowOps#copyFinite} (which also copies exactly) return identical results: the
 *       maximum of the same values is exact in any order ({@code Math.max} is commutative and
 *       associative, NaN and signed zeros included).</li>
 *   <li>{@link RowOps#exp2ShiftAccumulateRows} takes and refuses the same rows on both paths and
 *       gives, on each path, the bits of one call per row, partial sums included.</li>
 *   <li>Sums ({@link RowOps#expShiftSum}, and the partial sums of
 *       {@link RowOps#exp2ShiftAccumulateRows} added up in index order as the caller does) add the same
 *       non-negative values in different orders. A float sum of {@code N} non-negative terms in any
 *       order lies within {@code γ(N)·s} of the exact sum {@code s}, {@code γ(N) = N·u / (1 − N·u)},
 *       {@code u = 2⁻²⁴} (Higham, Accuracy and Stability of Numerical Algorithms, 4.2; every term
 *       goes through at most N − 1 roundings). So each path lies within {@code γ(N)·s} of
 *       {@code s}, and the two within {@code 2·γ(N)·s} of each other; {@code s} is computed here in
 *       double (relative error at most {@code N·2⁻⁵³}, added to the bound). Non-finite sums (a NaN
 *       or infinite term) must be identical. Sums near {@code Float.MAX_VALUE} may overflow in one
 *       order and not in the other and are not compared.</li>
 * </ul>
 * Rows mix ordinary values with NaN, infinities, signed zeros and the clamping limits of the
 * exponentials; lengths cover every size up to three vectors plus a tail, random lengths and a few
 * long rows, at odd offsets inside padded arrays.
 */
class RowOpsAgreementTest {
    private static final double U = 0x1p-24;
    private static final float[] SPECIALS = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0f, -0f,
            Float.MIN_VALUE, -Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE, 1e30f, -1e30f,
            ExpFloat.MIN_ARG, Math.nextDown(ExpFloat.MIN_ARG), Math.nextUp(ExpFloat.MIN_ARG), -100f,
            ExpFloat.MAX_ARG, Math.nextUp(ExpFloat.MAX_ARG), 89f,
            ExpFloat.EXP2_LO, -126.5f, -126f, 127f, 127.5f, ExpFloat.EXP2_HI, 200f, -200f};

    private final RowOps scalar = new ScalarRowOps();

    private static RowOps vector() {
        assumeTrue(Kernels.vectorBits() > 0, "no vector path in this JVM (" + Kernels.describe() + ")");
        return VectorKernels.rowOps();
    }

    /** A random test case: a row of {@code n} values at offset {@code off} inside padding. */
    private record Row(float[] data, int off, int n) {
        float[] copy() {
            return data.clone();
        }
    }

    /** Lengths: every size up to 3 vectors + 3, then random ones, then long rows. */
    private static int[] lengths(SplittableRandom random) {
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
    private static Row row(SplittableRandom random, int n, double range, double specialRate) {
        int before = random.nextInt(21), after = random.nextInt(21);
        float[] data = new float[before + n + after];
        for (int i = 0; i < data.length; i++) {
            boolean inside = i >= before && i < before + n;
            data[i] = random.nextDouble() < (inside ? specialRate : 0.2) ? SPECIALS[random.nextInt(SPECIALS.length)]
                    : (float) random.nextDouble(-range, range);
        }
        return new Row(data, before, n);
    }

    private static double specialRate(SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> 0.05;
            case 1 -> 0.002;
            default -> 0;
        };
    }

    private static float someShift(SplittableRandom random) {
        return random.nextInt(10) == 0 ? SPECIALS[random.nextInt(SPECIALS.length)] : (float) random.nextDouble(-5, 5);
    }

    @Test
    void expShiftSumAgrees() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EEDL);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                // rep 2: values of one order of magnitude, so that a lost or doubled term is larger than the bound
                Row r = row(random, n, rep == 2 ? 1 : 40, rep == 2 ? 0 : specialRate(random));
                float shift = rep == 1 ? someShift(random) : 0f;
                float[] xs = r.copy(), xv = r.copy();
                float ss = scalar.expShiftSum(xs, r.off(), n, shift);
                float sv = vector.expShiftSum(xv, r.off(), n, shift);
                String what = "expShiftSum n=" + n + " off=" + r.off() + " shift=" + shift;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
                assertSumsAgree(xs, r.off(), n, ss, sv, what);
            }
        }
    }

    /** Bounds of {@link RowOps#exp2ShiftAccumulateRows}: the attention's lazy bound, the largest allowed, and tighter. */
    private static float someBound(SplittableRandom random) {
        return switch (random.nextInt(4)) {
            case 0 -> AttentionKernel.LAZY_MAX;
            case 1 -> ExpFloat.EXP2_HI;
            case 2 -> 0f;
            default -> (float) random.nextDouble(-2, 20);
        };
    }

    /**
     * One row at a time (row 1 of a stride of 0, so its partial sums sit after row 0's) over
     * several tiles: the two paths take or refuse the same rows, write the same bits, and their
     * partial sums agree within the bound for sums; a refused row and row 0's sums are untouched.
     */
    @Test
    void exp2ShiftAccumulateAgreesOverSeveralTiles() {
        RowOps vector = vector();
        int lanes = vector.sumLanes();
        assertEquals(1, scalar.sumLanes());
        assertEquals(Kernels.vectorBits() / 32, lanes);
        SplittableRandom random = new SplittableRandom(0x5EED2L);
        int refused = 0;
        int taken = 0;
        for (int n : lengths(random)) {
            float[] sumsS = new float[2 + 3], sumsV = new float[2 * lanes + 3];
            Arrays.fill(sumsS, Float.NaN);
            Arrays.fill(sumsV, Float.NaN);
            sumsS[1] = 0f;
            Arrays.fill(sumsV, lanes, 2 * lanes, 0f);
            // every other row: values of one order of magnitude, so that a lost or doubled term is larger than the bound
            boolean narrow = random.nextBoolean();
            // wide rows mostly under a shift near their top, as the attention's are, so most are taken
            float shift = narrow ? 0f : random.nextInt(3) == 0 ? someShift(random) : 60f + someShift(random);
            float[] shifts = {Float.NaN, shift};
            int tiles = 1 + random.nextInt(4);
            int terms = 0;
            float[] all = new float[0];
            for (int t = 0; t < tiles; t++) {
                int len = t == 0 ? n : random.nextInt(n + 1);
                float bound = someBound(random);
                Row r = narrow ? row(random, len, 1, 0) : row(random, len, 60, specialRate(random));
                float[] xs = r.copy(), xv = r.copy();
                float[] sumsBefore = sumsS.clone();
                int doneS = scalar.exp2ShiftAccumulateRows(xs, r.off(), 0, len, 1, 2, shifts, bound, sumsS);
                int doneV = vector.exp2ShiftAccumulateRows(xv, r.off(), 0, len, 1, 2, shifts, bound, sumsV);
                String what = "exp2ShiftAccumulateRows n=" + len + " off=" + r.off() + " shift=" + shift
                        + " bound=" + bound + " tile " + t;
                assertEquals(doneS, doneV, what + ": rows done");
                assertSameBits(xs, xv, what);
                boolean within = shift != Float.NEGATIVE_INFINITY;
                for (int j = 0; j < len; j++) {
                    within &= !(r.data()[r.off() + j] > shift + bound);
                }
                assertEquals(within ? 2 : 1, doneS, what + ": rows done");
                if (!within) {
                    assertSameBits(r.data(), xs, what + ": refused row");
                    assertSameBits(sumsBefore, sumsS, what + ": sums of the refused row");
                    refused++;
                    continue;
                }
                taken++;
                assertUntouched(r, xs, what);
                all = concat(all, Arrays.copyOfRange(xs, r.off(), r.off() + len));
                terms += len;
            }
            String what = "exp2ShiftAccumulateRows, " + tiles + " tiles, " + terms + " terms";
            for (int i = 0; i < sumsS.length; i++) {
                if (i != 1) {
                    assertTrue(Float.isNaN(sumsS[i]), what + ": scalar wrote partial sum " + i);
                }
            }
            for (int i = 0; i < sumsV.length; i++) {
                if (i < lanes || i >= 2 * lanes) {
                    assertTrue(Float.isNaN(sumsV[i]), what + ": vector wrote partial sum " + i);
                }
            }
            float totalV = 0f;
            for (int lane = 0; lane < lanes; lane++) {
                totalV += sumsV[lanes + lane];
            }
            assertSumsAgree(all, 0, all.length, sumsS[1], totalV, what);
        }
        assertTrue(refused > 20 && taken > 100, "refused " + refused + ", taken " + taken);
    }

    /**
     * The rows form against one call per row on the same path: it stops at the first row one
     * call refuses, leaves that row and the rest (elements and partial sums) as they were, and
     * gives identical bits for every row before (it is the same operations per row); the
     * elements of the two paths are bit-identical, as for the single row.
     */
    @Test
    void exp2ShiftAccumulateRowsIsOneCallPerRow() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED6L);
        for (int n : lengths(random)) {
            if (n > 200) {
                continue;
            }
            int ld = Math.max(1, n + random.nextInt(5));
            int rows = 1 + random.nextInt(9);
            int r0 = random.nextInt(rows);
            int r1 = r0 + random.nextInt(rows - r0 + 1);
            Row r = row(random, rows * ld, 60, specialRate(random) / 8);
            float[] shifts = new float[rows];
            for (int i = 0; i < rows; i++) {
                shifts[i] = random.nextInt(3) == 0 ? someShift(random) : 70f;
            }
            float bound = someBound(random);
            float[][] elements = new float[2][];
            int[] done = new int[2];
            int k = 0;
            for (RowOps ops : new RowOps[] {scalar, vector}) {
                int lanes = ops.sumLanes();
                float[] sumsRows = new float[rows * lanes];
                for (int i = 0; i < sumsRows.length; i++) {
                    sumsRows[i] = (float) random.nextDouble(0, 4);
                }
                float[] sumsEach = sumsRows.clone();
                float[] xRows = r.copy();
                float[] xEach = r.copy();
                done[k] = ops.exp2ShiftAccumulateRows(xRows, r.off(), ld, n, r0, r1, shifts, bound, sumsRows);
                int expected = r0;
                while (expected < r1
                        && ops.exp2ShiftAccumulateRows(xEach, r.off(), ld, n, expected, expected + 1, shifts, bound,
                        sumsEach) == expected + 1) {
                    expected++;
                }
                String what = ops.getClass().getSimpleName() + " rows " + r0 + ".." + r1 + " of " + rows + ", n=" + n
                        + ", ld=" + ld + ", bound=" + bound;
                assertEquals(expected, done[k], what + ": rows done");
                assertSameBits(xEach, xRows, what + ": elements");
                assertSameBits(sumsEach, sumsRows, what + ": partial sums");
                float[] untouched = r.copy();
                for (int i = 0; i < untouched.length; i++) {
                    int row = (i - r.off()) / ld;
                    if (i >= r.off() && row >= r0 && row < done[k] && (i - r.off()) % ld < n) {
                        untouched[i] = xRows[i];
                    }
                }
                assertSameBits(untouched, xRows, what + ": written outside the rows done");
                elements[k++] = xRows;
            }
            assertEquals(done[0], done[1], "rows " + r0 + ".." + r1 + ", n=" + n + ": rows done, scalar vs vector");
            assertSameBits(elements[0], elements[1], "rows " + r0 + ".." + r1 + ", n=" + n + ": scalar vs vector elements");
        }
    }

    @Test
    void maximaAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED3L);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                Row r = row(random, n, 1000, specialRate(random));
                String what = "max n=" + n + " off=" + r.off();
                float[] xs = r.copy(), xv = r.copy();
                assertSameBits(scalar.max(xs, r.off(), n), vector.max(xv, r.off(), n), what);
                assertSameBits(r.data(), xs, what + " (scalar left the row alone)");
                assertSameBits(r.data(), xv, what + " (vector left the row alone)");
            }
        }
    }

    @Test
    void predicatesAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED4L);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 4; rep++) {
                Row r = row(random, n, 100, rep < 2 ? 0 : specialRate(random));
                if (rep == 1 && n > 0) {
                    // one non-finite value at a random place, in the vector body or in the tail
                    float[] bad = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
                    r.data()[r.off() + random.nextInt(n)] = bad[random.nextInt(3)];
                }
                float bound = rep == 3 ? SPECIALS[random.nextInt(SPECIALS.length)] : (float) random.nextDouble(50, 110);
                String what = "n=" + n + " off=" + r.off() + " bound=" + bound;
                assertEquals(scalar.anyAbove(r.data(), r.off(), n, bound), vector.anyAbove(r.data(), r.off(), n, bound),
                        "anyAbove " + what);
                assertEquals(scalar.anyNonFinite(r.data(), r.off(), n), vector.anyNonFinite(r.data(), r.off(), n),
                        "anyNonFinite " + what);
                boolean finite = true;
                for (int j = 0; j < n; j++) {
                    finite &= Float.isFinite(r.data()[r.off() + j]);
                }
                int to = random.nextInt(4);
                for (RowOps ops : new RowOps[] {scalar, vector}) {
                    float[] dst = new float[to + n + 3];
                    Arrays.fill(dst, -7f);
                    assertEquals(finite, ops.copyFinite(r.data(), r.off(), dst, to, n),
                            ops.getClass().getSimpleName() + " copyFinite " + what);
                    float[] expected = new float[dst.length];
                    Arrays.fill(expected, -7f);
                    System.arraycopy(r.data(), r.off(), expected, to, n);
                    assertSameBits(expected, dst, ops.getClass().getSimpleName() + " copyFinite " + what);
                }
            }
        }
    }

    @Test
    void elementwiseOpsAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED5L);
        float[] keepValues = {0f, -0f, 1f, 0.5f, -3f, Float.NaN, Float.NEGATIVE_INFINITY, Float.MIN_VALUE};
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                Row r = row(random, n, 30, specialRate(random));
                float factor = switch (rep) {
                    case 0 -> 1f;
                    case 1 -> (float) random.nextDouble(-8, 8);
                    default -> SPECIALS[random.nextInt(SPECIALS.length)];
                };

                float[] xs = r.copy(), xv = r.copy();
                scalar.scale(xs, r.off(), n, factor);
                vector.scale(xv, r.off(), n, factor);
                String what = "scale n=" + n + " off=" + r.off() + " factor=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
                // Into another array: the same products, nothing outside [at, at + n) written.
                int at = random.nextInt(7);
                float[] ds = new float[at + n + 5], dv = new float[at + n + 5];
                Arrays.fill(ds, 42f);
                Arrays.fill(dv, 42f);
                scalar.scaleInto(r.copy(), r.off(), n, factor, ds, at);
                vector.scaleInto(r.copy(), r.off(), n, factor, dv, at);
                assertSameBits(ds, dv, what + " into another array at " + at);
                for (int j = 0; j < ds.length; j++) {
                    float want = j >= at && j < at + n ? xs[r.off() + j - at] : 42f;
                    assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(ds[j]), what + " into, element " + j);
                }

                Row bias = row(random, n, 5, 0.1);
                xs = r.copy();
                xv = r.copy();
                scalar.addBias(xs, r.off(), n, bias.data(), bias.off(), factor);
                vector.addBias(xv, r.off(), n, bias.data(), bias.off(), factor);
                what = "addBias n=" + n + " off=" + r.off() + " at=" + bias.off() + " factor=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                float[] keep = new float[bias.data().length];
                for (int i = 0; i < keep.length; i++) {
                    keep[i] = keepValues[random.nextInt(keepValues.length)];
                }
                xs = r.copy();
                xv = r.copy();
                scalar.mask(xs, r.off(), n, keep, bias.off());
                vector.mask(xv, r.off(), n, keep, bias.off());
                what = "mask n=" + n + " off=" + r.off() + " at=" + bias.off();
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                xs = r.copy();
                xv = r.copy();
                scalar.softcap(xs, r.off(), n, factor);
                vector.softcap(xv, r.off(), n, factor);
                what = "softcap n=" + n + " off=" + r.off() + " cap=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                int center = random.nextInt(-3 * n - 5, 3 * n + 5);
                xs = r.copy();
                xv = r.copy();
                scalar.addDistanceBias(xs, r.off(), n, factor, center);
                vector.addDistanceBias(xv, r.off(), n, factor, center);
                what = "addDistanceBias n=" + n + " off=" + r.off() + " slope=" + factor + " center=" + center;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
            }
        }
    }

    /** Both paths' sums against each other and against the exact sum, as derived in the class comment. */
    private static void assertSumsAgree(float[] values, int off, int n, float scalarSum, float vectorSum, String what) {
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
    private static void assertUntouched(Row r, float[] after, String what) {
        float[] before = r.data();
        for (int i = 0; i < before.length; i++) {
            if (i < r.off() || i >= r.off() + r.n()) {
                assertEquals(Float.floatToIntBits(before[i]), Float.floatToIntBits(after[i]), what + ": wrote padding at " + i);
            }
        }
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(actual[i])) {
                throw new AssertionError(what + ": element " + i + ": scalar " + expected[i] + " vs vector " + actual[i]);
            }
        }
    }

    private static void assertSameBits(float expected, float actual, String what) {
        if (Float.floatToIntBits(expected) != Float.floatToIntBits(actual)) {
            throw new AssertionError(what + ": scalar " + expected + " vs vector " + actual);
        }
    }

    private static float[] concat(float[] a, float[] b) {
        float[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
