package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The active path's {@link RowOps#expShiftSum} and {@link RowOps#exp2ShiftAccumulate} against
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
        Kernels.ROWS.exp2ShiftAccumulate(y, 0, n, 0f, new float[Kernels.ROWS.sumLanes()], 0);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double exact = StrictMath.pow(2, x[i]);
            worst = Math.max(worst, Math.abs(y[i] - exact) / Math.ulp((float) exact));
        }
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
    }

    @Test
    void exp2IsExactOnIntegersAndHandlesTheEdges() {
        float[] edge = {0f, -0f, 1f, -1f, 10f, -20f, 127f, -126f, Float.NEGATIVE_INFINITY, -200f, -126.6f,
                Float.NaN, 127.6f, 500f, Float.POSITIVE_INFINITY};
        for (int lead : new int[]{0, Math.max(1, LANES * 3 - edge.length)}) {
            float[] y = new float[lead + edge.length];
            System.arraycopy(edge, 0, y, lead, edge.length);
            Kernels.ROWS.exp2ShiftAccumulate(y, 0, y.length, 0f, new float[Kernels.ROWS.sumLanes()], 0);
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
            assertEquals(Float.POSITIVE_INFINITY, y[lead + 14]);
        }
    }

    @Test
    void exp2EveryLaneEqualsTheOneValueFormAndPartialSumsAccumulate() {
        int n = 4099;
        int lanes = Kernels.ROWS.sumLanes();
        float[] x = new float[n];
        float[] sums = new float[lanes + 2];
        double[] expected = new double[lanes + 2];
        for (int lane = 0; lane < lanes; lane++) {
            sums[1 + lane] = lane + 1;      // partial sums of earlier tiles, to be added to
            expected[1 + lane] = lane + 1;
        }
        for (int i = 0; i < n; i++) {
            x[i] = -140f + 150f * i / n;
            expected[1 + i % lanes] += StrictMath.pow(2, x[i] - 3.25);
        }
        float[] y = x.clone();
        Kernels.ROWS.exp2ShiftAccumulate(y, 0, n, 3.25f, sums, 1);
        for (int i = 0; i < n; i++) {
            assertEquals(Float.floatToRawIntBits(ExpFloat.exp2(x[i] - 3.25f)), Float.floatToRawIntBits(y[i]), "x = " + x[i]);
        }
        for (int i = 0; i < sums.length; i++) {
            assertEquals(expected[i], sums[i], 1e-6 * expected[i], "partial sum " + (i - 1));
        }
    }
}
