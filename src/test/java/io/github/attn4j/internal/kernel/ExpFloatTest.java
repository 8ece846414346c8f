package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The active path's {@link RowOps#expShiftSum} and {@link RowOps#exp2ShiftAccumulateRows} against
 * {@link StrictMath} (fdlibm) in double, and against {@link ExpFloat#exp} and
 * {@link ExpFloat#exp2} bit for bit.
 */
class ExpFloatTest {
    private static final int LANES = Math.max(1, Kernels.vectorBits() / 32);

    @Test
    void withinTwoUlpAcrossTheRange() {
        int n = (1 << 20) + 5;    // not a multiple of the lane count: the scalar tail runs too
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = -86.5f + 174.7f * i / n;
        }
        float[] y = x.clone();
        Kernels.ROWS.expShiftSum(y, 0, n, 0f);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double exact = StrictMath.exp(x[i]);
            worst = Math.max(worst, Math.abs(y[i] - exact) / Math.ulp((float) exact));
        }
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
    }

    @Test
    void edgeValuesInVectorLanesAndInTheTail() {
        float[] edge = {0f, -0f, Float.NEGATIVE_INFINITY, -100f, -86.7f, Float.NaN, 89f, Float.POSITIVE_INFINITY, 1f, -1f};
        for (int lead : new int[]{0, Math.max(1, LANES * 3 - edge.length)}) {
            float[] y = new float[lead + edge.length];
            System.arraycopy(edge, 0, y, lead, edge.length);
            Kernels.ROWS.expShiftSum(y, 0, y.length, 0f);
            assertEquals(1f, y[lead]);
            assertEquals(1f, y[lead + 1]);
            assertEquals(0f, y[lead + 2]);
            assertEquals(0f, y[lead + 3]);
            assertEquals(0f, y[lead + 4]);
            assertTrue(Float.isNaN(y[lead + 5]));
            assertEquals(Float.POSITIVE_INFINITY, y[lead + 6]);
            assertEquals(Float.POSITIVE_INFINITY, y[lead + 7]);
            assertEquals((float) Math.E, y[lead + 8], Math.ulp((float) Math.E));
            assertEquals((float) (1 / Math.E), y[lead + 9], Math.ulp((float) (1 / Math.E)));
        }
    }

    @Test
    void shiftsAndSums() {
        float[] x = new float[37];
        double expected = 0;
        for (int i = 0; i < x.length; i++) {
            x[i] = i * 0.25f;
            expected += StrictMath.exp(i * 0.25 - 9.0);
        }
        float sum = Kernels.ROWS.expShiftSum(x, 0, x.length, 9f);
        assertEquals(expected, sum, 1e-6 * expected);
        assertEquals(StrictMath.exp(36 * 0.25 - 9), x[36], 2e-7);
    }

    @Test
    void everyLaneEqualsTheOneValueForm() {
        int n = 4099;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = -90f + 180f * i / n;
        }
        float[] y = x.clone();
        Kernels.ROWS.expShiftSum(y, 0, n, 0.5f);
        for (int i = 0; i < n; i++) {
            assertEquals(Float.floatToRawIntBits(ExpFloat.exp(x[i] - 0.5f)), Float.floatToRawIntBits(y[i]), "x = " + x[i]);
        }
    }

    @Test
    void exp2WithinTwoUlpAcrossTheNormalRange() {
        int n = (1 << 21) + 7;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = -126f + 253f * i / n;
        }
        float[] y = x.clone();
        assertEquals(1, Kernels.ROWS.exp2ShiftAccumulateRows(y, 0, 0, n, 0, 1, new float[] {0f}, ExpFloat.EXP2_HI,
                new float[Kernels.ROWS.sumLanes()]));
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double exact = StrictMath.pow(2, x[i]);
            worst = Math.max(worst, Math.abs(y[i] - exact) / Math.ulp((float) exact));
        }
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
    }

    /**
     * Exact powers of two, 0 below the range (-Infinity included), NaN kept, +Infinity from
     * 2^127.5 on; a row with an argument above the bound ({@code EXP2_HI} here) is refused and
     * left as it was.
     */
    @Test
    void exp2IsExactOnIntegersAndHandlesTheEdges() {
        float[] edge = {0f, -0f, 1f, -1f, 10f, -20f, 127f, -126f, Float.NEGATIVE_INFINITY, -200f, -126.6f,
                Float.NaN, 127.6f, 128f};
        float[] shifts = {0f};
        for (int lead : new int[]{0, Math.max(1, LANES * 3 - edge.length)}) {
            float[] y = new float[lead + edge.length];
            System.arraycopy(edge, 0, y, lead, edge.length);
            assertEquals(1, Kernels.ROWS.exp2ShiftAccumulateRows(y, 0, 0, y.length, 0, 1, shifts, ExpFloat.EXP2_HI,
                    new float[Kernels.ROWS.sumLanes()]));
            assertEquals(1f, y[lead]);
            assertEquals(1f, y[lead + 1]);
            assertEquals(2f, y[lead + 2]);
            assertEquals(0.5f, y[lead + 3]);
            assertEquals(1024f, y[lead + 4]);
            assertEquals(0x1p-20f, y[lead + 5]);
            assertEquals(0x1p127f, y[lead + 6]);
            assertEquals(0x1p-126f, y[lead + 7]);
            assertEquals(0f, y[lead + 8]);
            assertEquals(0f, y[lead + 9]);
            assertEquals(0f, y[lead + 10]);
            assertTrue(Float.isNaN(y[lead + 11]));
            assertEquals(Float.POSITIVE_INFINITY, y[lead + 12]);
            assertEquals(Float.POSITIVE_INFINITY, y[lead + 13]);
            for (float above : new float[]{Math.nextUp(ExpFloat.EXP2_HI), 500f, Float.POSITIVE_INFINITY}) {
                float[] z = y.clone();
                z[z.length - 1] = above;
                float[] before = z.clone();
                assertEquals(0, Kernels.ROWS.exp2ShiftAccumulateRows(z, 0, 0, z.length, 0, 1, shifts,
                        ExpFloat.EXP2_HI, new float[Kernels.ROWS.sumLanes()]), "refused for " + above);
                assertArrayEquals(before, z, "row left as it was for " + above);
            }
        }
    }

    @Test
    void exp2EveryLaneEqualsTheOneValueFormAndPartialSumsAccumulate() {
        int n = 4099;
        int lanes = Kernels.ROWS.sumLanes();
        float[] x = new float[n];
        // Row 1 of a stride of 0: its partial sums follow row 0's, which must stay 0.
        float[] sums = new float[2 * lanes];
        double[] expected = new double[2 * lanes];
        for (int lane = 0; lane < lanes; lane++) {
            sums[lanes + lane] = lane + 1;      // partial sums of earlier tiles, to be added to
            expected[lanes + lane] = lane + 1;
        }
        for (int i = 0; i < n; i++) {
            x[i] = -140f + 150f * i / n;
            expected[lanes + i % lanes] += StrictMath.pow(2, x[i] - 3.25);
        }
        float[] y = x.clone();
        assertEquals(2, Kernels.ROWS.exp2ShiftAccumulateRows(y, 0, 0, n, 1, 2, new float[] {Float.NaN, 3.25f},
                AttentionKernel.LAZY_MAX, sums));
        for (int i = 0; i < n; i++) {
            assertEquals(Float.floatToRawIntBits(ExpFloat.exp2(x[i] - 3.25f)), Float.floatToRawIntBits(y[i]), "x = " + x[i]);
        }
        for (int i = 0; i < sums.length; i++) {
            assertEquals(expected[i], sums[i], 1e-6 * expected[i], "partial sum " + i);
        }
    }
}
