package io.github.attn4j.kernel;

/**
 * The float exponential both kernel paths use, built only from exactly specified IEEE operations
 * (multiply, add, fused multiply-add, compare, bit moves), so every thread, every JIT tier and the
 * interpreter return the same bits. The Vector API's own {@code EXP} does not: its intrinsic and
 * its Java fallback differ in the last place, which would make results depend on warm-up and
 * scheduling. {@link VectorRowOps} evaluates the same steps lane-wise; {@link #exp} is the
 * one-value form, bit-identical to a lane.
 *
 * <p>Method: {@code e^x = 2^k · e^r} with {@code k = round(x / ln 2)}, {@code |r| <= ln2 / 2}, and
 * a degree-7 polynomial for {@code e^r}. Results are within 2 ulp of the exact exponential; 0
 * below -86.6 (results under 2.4e-38, and {@code -Infinity}), {@code +Infinity} above
 * {@code ln(Float.MAX_VALUE)}, NaN for NaN.
 */
final class ExpFloat {
    static final float LOG2E = 1.44269504088896341f;
    /** ln 2 split so that {@code n * LN2_HI} is exact for the n that occur. */
    static final float LN2_HI = 0.693359375f;
    static final float LN2_LO = -2.12194440e-4f;
    /** Adding and subtracting 1.5·2²³ rounds to the nearest integer in float arithmetic. */
    static final float ROUND = 12582912f;
    /** Below this (about ln(2⁻¹²⁵)) the result, under 2.4e-38, is flushed to zero. */
    static final float MIN_ARG = -86.6f;
    /** Above ln(Float.MAX_VALUE) the result is +Infinity. */
    static final float MAX_ARG = 88.72283f;
    /** Minimax coefficients of (eʳ − 1 − r) / r² on |r| ≤ ln2/2 (relative error below 2⁻²³). */
    static final float P0 = 5.0000001201e-1f;
    static final float P1 = 1.6666665459e-1f;
    static final float P2 = 4.1665795894e-2f;
    static final float P3 = 8.3334519073e-3f;
    static final float P4 = 1.3981999507e-3f;
    static final float P5 = 1.9875691500e-4f;

    private ExpFloat() {
    }

    /** {@code e^arg}, the same bits as one lane of the vector form. */
    static float exp(float arg) {
        if (Float.isNaN(arg)) {
            return arg;
        }
        if (arg < MIN_ARG) {
            return 0f;
        }
        if (arg > MAX_ARG) {
            return Float.POSITIVE_INFINITY;
        }
        float k = Math.fma(arg, LOG2E, ROUND) - ROUND;
        float r = Math.fma(k, -LN2_HI, arg);
        r = Math.fma(k, -LN2_LO, r);
        float p = Math.fma(r, P5, P4);
        p = Math.fma(p, r, P3);
        p = Math.fma(p, r, P2);
        p = Math.fma(p, r, P1);
        p = Math.fma(p, r, P0);
        p = Math.fma(p, r * r, r) + 1f;
        // 2^k as 2^(k-1) * 2: k is in [-125, 128], so k - 1 + 127 fits the exponent field [1, 254].
        return p * Float.intBitsToFloat(((int) k + 126) << 23) * 2f;
    }
}
