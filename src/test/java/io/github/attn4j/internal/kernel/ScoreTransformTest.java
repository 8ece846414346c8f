package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soft-cap ({@link ExpFloat#tanh}, {@link RowOps#softcap}) and the ALiBi distance bias
 * ({@link RowOps#addDistanceBias}) of the active path: against {@link StrictMath#tanh} in double,
 * against the one-value form bit for bit (vector lanes and the scalar tail alike), and on edge
 * values.
 */
class ScoreTransformTest {
    private static final int LANES = Math.max(1, Kernels.vectorBits() / 32);

    @Test
    void tanhWithinFourUlpAcrossTheRange() {
        int n = (1 << 20) + 3;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = -12f + 24f * i / n;
        }
        float[] y = x.clone();
        Kernels.ROWS.softcap(y, 0, n, 1f);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double exact = StrictMath.tanh(x[i]);
            worst = Math.max(worst, Math.abs(y[i] - exact) / Math.ulp((float) exact));
            assertEquals(Float.floatToIntBits(ExpFloat.tanh(x[i])), Float.floatToIntBits(y[i]), "lane vs one-value form at " + x[i]);
        }
        assertTrue(worst <= 4, "worst error " + worst + " ulp");
    }

    @Test
    void softcapOfHugeAndSpecialValuesStaysBounded() {
        float[] edge = {1e30f, -1e30f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0f, -0f, 44f, 100f, Float.NaN, 0.6249f};
        for (int lead : new int[]{0, Math.max(1, LANES * 3 - edge.length)}) {
            float[] y = new float[lead + edge.length];
            System.arraycopy(edge, 0, y, lead, edge.length);
            Kernels.ROWS.softcap(y, 0, y.length, 30f);
            assertEquals(30f, y[lead]);
            assertEquals(-30f, y[lead + 1]);
            assertEquals(30f, y[lead + 2]);
            assertEquals(-30f, y[lead + 3]);
            assertEquals(0f, y[lead + 4]);
            assertEquals(Float.floatToIntBits(-0f), Float.floatToIntBits(y[lead + 5]));
            assertEquals(30f, y[lead + 6]);
            assertEquals(30f, y[lead + 7]);
            assertTrue(Float.isNaN(y[lead + 8]));
            assertEquals(30 * StrictMath.tanh(0.6249f), y[lead + 9], 4 * Math.ulp(30f * 0.555f));
        }
    }

    @Test
    void distanceBiasIsExactForIntegerDistances() {
        SplittableRandom random = new SplittableRandom(3);
        for (int n : new int[]{1, LANES - 1, LANES, 3 * LANES + 5, 1000}) {
            if (n < 1) {
                continue;
            }
            int center = random.nextInt(-50, 2000);
            float[] s = new float[n + 2];
            for (int i = 0; i < s.length; i++) {
                s[i] = (float) random.nextDouble(-4, 4);
            }
            float[] before = s.clone();
            Kernels.ROWS.addDistanceBias(s, 1, n, 0.125f, center);
            for (int j = 0; j < n; j++) {
                // slope 1/8 times an integer below 2^21 is exact, so the fused multiply-add rounds once.
                assertEquals((float) (before[1 + j] - 0.125 * Math.abs(center - j)), s[1 + j], "j=" + j + " center=" + center);
            }
            assertEquals(before[0], s[0]);
            assertEquals(before[n + 1], s[n + 1]);
        }
    }
}
