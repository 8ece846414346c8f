package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.RowCases.Row;
import static io.github.attn4j.internal.kernel.RowCases.assertSameBits;
import static io.github.attn4j.internal.kernel.RowCases.assertSumsAgree;
import static io.github.attn4j.internal.kernel.RowCases.assertUntouched;
import static io.github.attn4j.internal.kernel.RowCases.concat;
import static io.github.attn4j.internal.kernel.RowCases.lengths;
import static io.github.attn4j.internal.kernel.RowCases.row;
import static io.github.attn4j.internal.kernel.RowCases.someShift;
import static io.github.attn4j.internal.kernel.RowCases.specialRate;
import static io.github.attn4j.internal.kernel.RowCases.vector;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RowOps#exp2ShiftAccumulateRows}, the online softmax's exponential pass, on
 * {@link ScalarRowOps} and {@link VectorRowOps} side by side, as {@link RowOpsAgreementTest} does
 * for the other row loops: both paths take and refuse the same rows, write bit-identical
 * elements ({@link ExpFloat#exp2} is one lane of the vector form) and never write a refused row
 * or anything outside the rows done; the rows form gives, on each path, the bits of one call per
 * row, partial sums included; and the partial sums of the two paths, added up in index order as
 * the caller does, agree within the bound for sums of non-negative terms in different orders.
 */
class Exp2RowsAgreementTest {
    private final RowOps scalar = new ScalarRowOps();

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

    /**
     * {@code bound = +Infinity} (the attention's first tile, every row's shift just taken as its
     * maximum): on each path, the same rows done and the same bits as the checked call with the
     * lazy bound, which takes every such row; rows of only {@code -Infinity} (shift
     * {@code -Infinity}) are refused by both.
     */
    @Test
    void anUncheckedCallOnRowsUnderTheirMaximaIsTheCheckedCall() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED7L);
        for (int n : lengths(random)) {
            if (n > 300) {
                continue;
            }
            int ld = Math.max(1, n + random.nextInt(5));
            int rows = 1 + random.nextInt(6);
            Row r = row(random, rows * ld, 60, specialRate(random) / 8);
            float[] shifts = new float[rows];
            for (int i = 0; i < rows; i++) {
                // the row's maximum as the tile kernel takes it: NaN left out, unless nothing else is there
                float m = Float.NEGATIVE_INFINITY;
                boolean nan = false;
                for (int j = 0; j < n; j++) {
                    float x = r.data()[r.off() + i * ld + j];
                    nan |= Float.isNaN(x);
                    m = Float.isNaN(x) ? m : Math.max(m, x);
                }
                shifts[i] = m == Float.NEGATIVE_INFINITY && nan ? Float.NaN : m;
            }
            for (RowOps ops : new RowOps[] {scalar, vector}) {
                int lanes = ops.sumLanes();
                float[] sumsChecked = new float[rows * lanes];
                float[] sumsUnchecked = new float[rows * lanes];
                float[] checked = r.copy();
                float[] unchecked = r.copy();
                String what = ops.getClass().getSimpleName() + " n=" + n + ", ld=" + ld + ", rows=" + rows;
                for (int row = 0; row < rows; ) {
                    int a = ops.exp2ShiftAccumulateRows(checked, r.off(), ld, n, row, rows, shifts, AttentionKernel.LAZY_MAX,
                            sumsChecked);
                    int b = ops.exp2ShiftAccumulateRows(unchecked, r.off(), ld, n, row, rows, shifts,
                            Float.POSITIVE_INFINITY, sumsUnchecked);
                    assertEquals(a, b, what + ": rows done from " + row);
                    if (a < rows) {
                        assertEquals(Float.NEGATIVE_INFINITY, shifts[a], what + ": refused row " + a);
                    }
                    row = a + 1;
                }
                assertSameBits(checked, unchecked, what + ": elements");
                assertSameBits(sumsChecked, sumsUnchecked, what + ": partial sums");
            }
        }
    }
}
