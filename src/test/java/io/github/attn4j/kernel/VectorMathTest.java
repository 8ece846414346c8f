package io.github.attn4j.kernel;

import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link VectorMath} against {@link StrictMath} (fdlibm) in double. */
class VectorMathTest {
    private static float[] exp(float... x) {
        float[] in = java.util.Arrays.copyOf(x, Vectors.LANES * ((x.length + Vectors.LANES - 1) / Vectors.LANES));
        float[] out = new float[in.length];
        for (int i = 0; i < in.length; i += Vectors.LANES) {
            VectorMath.exp(FloatVector.fromArray(Vectors.SPECIES, in, i)).intoArray(out, i);
        }
        return out;
    }

    @Test
    void withinTwoUlpAcrossTheRange() {
        int n = 1 << 20;
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = -86.5f + 174.7f * i / n;
        }
        float[] y = exp(x);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double exact = StrictMath.exp(x[i]);
            double ulps = Math.abs(y[i] - exact) / Math.ulp((float) exact);
            worst = Math.max(worst, ulps);
        }
        assertTrue(worst <= 2, "worst error " + worst + " ulp");
    }

    @Test
    void edgeValues() {
        float[] y = exp(0f, -0f, Float.NEGATIVE_INFINITY, -100f, -86.7f, Float.NaN, 89f, Float.POSITIVE_INFINITY, 1f, -1f);
        assertEquals(1f, y[0]);
        assertEquals(1f, y[1]);
        assertEquals(0f, y[2]);
        assertEquals(0f, y[3]);
        assertEquals(0f, y[4]);
        assertTrue(Float.isNaN(y[5]));
        assertEquals(Float.POSITIVE_INFINITY, y[6]);
        assertEquals(Float.POSITIVE_INFINITY, y[7]);
        assertEquals((float) Math.E, y[8], Math.ulp((float) Math.E));
        assertEquals((float) (1 / Math.E), y[9], Math.ulp((float) (1 / Math.E)));
    }

    @Test
    void sumsLanesInOrder() {
        float[] v = new float[Vectors.LANES];
        v[0] = 1e8f;
        v[1] = 1f;
        v[2] = -1e8f;
        // In lane order: (1e8 + 1) rounds to 1e8, then - 1e8 gives exactly 0.
        assertEquals(0f, VectorMath.sumLanes(FloatVector.fromArray(Vectors.SPECIES, v, 0)));
    }
}
