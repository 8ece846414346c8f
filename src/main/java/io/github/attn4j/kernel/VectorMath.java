package io.github.attn4j.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Elementwise math built only from exactly specified IEEE operations (multiply, add, fused
 * multiply-add, compare, bit moves), so every thread, every JIT tier and the interpreter return
 * the same bits. The Vector API's own {@code EXP} does not: its intrinsic and its Java fallback
 * differ in the last place, which would make results depend on warm-up and scheduling.
 */
final class VectorMath {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;

    private static final float LOG2E = 1.44269504088896341f;
    /** ln 2 split so that {@code n * LN2_HI} is exact for the n that occur. */
    private static final float LN2_HI = 0.693359375f;
    private static final float LN2_LO = -2.12194440e-4f;
    /** Adding and subtracting 1.5·2²³ rounds to the nearest integer in float arithmetic. */
    private static final float ROUND = 12582912f;
    /** Below this (about ln(2⁻¹²⁵)) the result, under 2.4e-38, is flushed to zero. */
    private static final float MIN_ARG = -86.6f;
    /** Above ln(Float.MAX_VALUE) the result is +Infinity. */
    private static final float MAX_ARG = 88.72283f;
    /** Minimax coefficients of (eʳ − 1 − r) / r² on |r| ≤ ln2/2 (relative error below 2⁻²³). */
    private static final float P0 = 5.0000001201e-1f;
    private static final float P1 = 1.6666665459e-1f;
    private static final float P2 = 4.1665795894e-2f;
    private static final float P3 = 8.3334519073e-3f;
    private static final float P4 = 1.3981999507e-3f;
    private static final float P5 = 1.9875691500e-4f;

    private VectorMath() {
    }

    /**
     * {@code e^x} per lane, within 2 ulp of the exact value; 0 for {@code x < -86.6} (results
     * under 2.4e-38, and {@code -Infinity}), {@code +Infinity} above {@code ln(Float.MAX_VALUE)},
     * NaN for NaN.
     */
    static FloatVector exp(FloatVector x) {
        FloatVector clamped = x.max(MIN_ARG).min(MAX_ARG);
        FloatVector n = clamped.fma(FloatVector.broadcast(S, LOG2E), FloatVector.broadcast(S, ROUND)).sub(ROUND);
        FloatVector r = n.fma(FloatVector.broadcast(S, -LN2_HI), clamped);
        r = n.fma(FloatVector.broadcast(S, -LN2_LO), r);
        FloatVector p = r.fma(FloatVector.broadcast(S, P5), FloatVector.broadcast(S, P4));
        p = p.fma(r, FloatVector.broadcast(S, P3));
        p = p.fma(r, FloatVector.broadcast(S, P2));
        p = p.fma(r, FloatVector.broadcast(S, P1));
        p = p.fma(r, FloatVector.broadcast(S, P0));
        p = p.fma(r.mul(r), r).add(1f);
        // 2^n as 2^(n-1) * 2: n is in [-125, 128], so n - 1 + 127 fits the exponent field [1, 254].
        IntVector bits = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(126).lanewise(VectorOperators.LSHL, 23);
        FloatVector result = p.mul(bits.reinterpretAsFloats()).mul(2f);
        result = result.blend(0f, x.compare(VectorOperators.LT, MIN_ARG));
        result = result.blend(Float.POSITIVE_INFINITY, x.compare(VectorOperators.GT, MAX_ARG));
        return result.blend(x, x.test(VectorOperators.IS_NAN));
    }

    /** Sum of the lanes in lane order (the Vector API's {@code ADD} reduction has no fixed order). */
    static float sumLanes(FloatVector v) {
        float[] lanes = new float[L];
        v.intoArray(lanes, 0);
        float sum = 0f;
        for (float lane : lanes) {
            sum += lane;
        }
        return sum;
    }
}
