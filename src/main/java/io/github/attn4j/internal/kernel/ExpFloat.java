package io.github.attn4j.internal.kernel;

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
 *
 * <p>{@link #exp2} is the base-2 form the online softmax runs on (its scores are pre-multiplied
 * by {@code log2 e}): {@code 2^x = 2^k · 2^r} with {@code k = round(x)}, so the reduction
 * {@code r = x - k} is exact and no {@code ln 2} constants are needed, a degree-6 polynomial for
 * {@code 2^r}, and 2^k assembled from the bits of the rounding sum, so no float-to-int conversion
 * either. Results are within 2 ulp of the exact value for arguments in [-126, 127]; 0 at or below
 * -126.5 (and for {@code -Infinity}), {@code +Infinity} from 127.5 up, NaN for NaN. The clamps
 * are a compare and a blend each, cheaper than {@link Math#max}'s NaN and signed-zero rules.
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

    /** {@link #exp2}'s arguments are clamped to [EXP2_LO, EXP2_HI]: 2^k is then 0 at the low end, infinite at the high end. */
    static final float EXP2_LO = -127f;
    static final float EXP2_HI = 128f;
    /** Coefficients of (2ʳ − 1) / r on |r| ≤ 1/2, fitted for the least maximum relative error (1.97e-9 in exact arithmetic). */
    static final float Q1 = 0.6931471824645996f;
    static final float Q2 = 0.24022647738456726f;
    static final float Q3 = 0.055503323674201965f;
    static final float Q4 = 0.00961843691766262f;
    static final float Q5 = 0.0013398873852565885f;
    static final float Q6 = 0.00015353361959569156f;
    /** The exponent bias: {@code (bits(x + ROUND) + BIAS) << 23} is the float 2^round(x) for x in [-127, 128]. */
    static final int BIAS = 127;

    /** Below this magnitude {@link #tanh} takes its odd polynomial, above it {@code 1 - 2 / (e^2|x| + 1)}. */
    static final float TANH_SMALL = 0.625f;
    /** {@code 2 log2 e}: {@code e^(2a) = 2^(a · TWO_LOG2E)}. */
    static final float TWO_LOG2E = 2.88539008177792681f;
    /** Coefficients of (tanh(x) − x) / x³ in x² on |x| ≤ 0.625, fitted for the least relative error of tanh (0.6 ulp in float). */
    static final float T0 = -0.33333292603492737f;
    static final float T1 = 0.13331718742847443f;
    static final float T2 = -0.053763799369335175f;
    static final float T3 = 0.020720280706882477f;
    static final float T4 = -0.0057981000281870365f;

    private ExpFloat() {
    }

    /**
     * {@code tanh(x)}, the same bits as one lane of the vector form ({@link RowOps#softcap}): an odd
     * polynomial below {@link #TANH_SMALL}, {@code 1 - 2 / (2^(2|x| log2 e) + 1)} above it, the
     * sign of x put back. Within a few ulp; ±1 for large |x| and ±Infinity, NaN for NaN.
     */
    static float tanh(float x) {
        float a = Math.abs(x);
        float t;
        if (a < TANH_SMALL) {
            float u = a * a;
            float p = Math.fma(Math.fma(Math.fma(Math.fma(T4, u, T3), u, T2), u, T1), u, T0);
            t = Math.fma(a * u, p, a);
        } else {
            t = 1f - 2f / (exp2(a * TWO_LOG2E) + 1f);
        }
        return Float.intBitsToFloat(Float.floatToRawIntBits(t) | (Float.floatToRawIntBits(x) & 0x80000000));
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

    /**
     * {@code 2^arg}, the same bits as one lane of the vector form. Adding ROUND leaves round(arg)
     * in the low mantissa bits of {@code kf}, and ROUND's own bits vanish when shifted by 23, so
     * {@code (bits(kf) + 127) << 23} is the exponent field of 2^k.
     */
    static float exp2(float arg) {
        float a = arg < EXP2_LO ? EXP2_LO : arg > EXP2_HI ? EXP2_HI : arg;
        float kf = a + ROUND;
        float r = a - (kf - ROUND);
        float p = Math.fma(Q6, r, Q5);
        p = Math.fma(p, r, Q4);
        p = Math.fma(p, r, Q3);
        p = Math.fma(p, r, Q2);
        p = Math.fma(p, r, Q1);
        p = Math.fma(p, r, 1f);
        return p * Float.intBitsToFloat((Float.floatToRawIntBits(kf) + BIAS) << 23);
    }
}
