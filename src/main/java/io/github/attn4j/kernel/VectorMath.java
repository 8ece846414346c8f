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
     * Replaces {@code x[off..off+n)} by {@code e^(x - shift)} and returns the sum of the new
     * values, added in a fixed order. Each value is within 2 ulp of the exact exponential; 0 for
     * arguments below -86.6 (results under 2.4e-38, and {@code -Infinity}), {@code +Infinity}
     * above {@code ln(Float.MAX_VALUE)}, NaN for NaN. The math is written inside the loop: a
     * helper taking vectors that C2 does not inline boxes them on every call.
     */
    static float expShiftSum(float[] x, int off, int n, float shift) {
        FloatVector sh = FloatVector.broadcast(S, shift);
        FloatVector log2e = FloatVector.broadcast(S, LOG2E);
        FloatVector round = FloatVector.broadcast(S, ROUND);
        FloatVector sum = FloatVector.zero(S);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector arg = FloatVector.fromArray(S, x, off + j).sub(sh);
            FloatVector clamped = arg.max(MIN_ARG).min(MAX_ARG);
            FloatVector k = clamped.fma(log2e, round).sub(ROUND);
            FloatVector r = k.fma(FloatVector.broadcast(S, -LN2_HI), clamped);
            r = k.fma(FloatVector.broadcast(S, -LN2_LO), r);
            FloatVector p = r.fma(FloatVector.broadcast(S, P5), FloatVector.broadcast(S, P4));
            p = p.fma(r, FloatVector.broadcast(S, P3));
            p = p.fma(r, FloatVector.broadcast(S, P2));
            p = p.fma(r, FloatVector.broadcast(S, P1));
            p = p.fma(r, FloatVector.broadcast(S, P0));
            p = p.fma(r.mul(r), r).add(1f);
            // 2^k as 2^(k-1) * 2: k is in [-125, 128], so k - 1 + 127 fits the exponent field [1, 254].
            IntVector bits = ((IntVector) k.convert(VectorOperators.F2I, 0)).add(126).lanewise(VectorOperators.LSHL, 23);
            FloatVector e = p.mul(bits.reinterpretAsFloats()).mul(2f);
            e = e.blend(0f, arg.compare(VectorOperators.LT, MIN_ARG));
            e = e.blend(Float.POSITIVE_INFINITY, arg.compare(VectorOperators.GT, MAX_ARG));
            e = e.blend(arg, arg.test(VectorOperators.IS_NAN));
            e.intoArray(x, off + j);
            sum = sum.add(e);
        }
        float[] lanes = new float[L];
        sum.intoArray(lanes, 0);
        float total = 0f;
        for (float lane : lanes) {
            total += lane;
        }
        for (; j < n; j++) {
            float arg = x[off + j] - shift;
            x[off + j] = arg < MIN_ARG ? 0f : (float) StrictMath.exp(arg);
            total += x[off + j];
        }
        return total;
    }
}
