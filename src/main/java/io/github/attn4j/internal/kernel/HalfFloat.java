package io.github.attn4j.internal.kernel;

/**
 * The 16-bit float formats a narrow cache stores ({@link HalfPanels}): IEEE binary16 (F16) and
 * bfloat16 (BF16), one value per {@code short}. Encoding runs once per appended value, a row at
 * a time ({@link DecodeOps#toHalf}: lane-wise in {@link VectorNarrow}, or through
 * {@link #toF16}/{@link #toBf16} here); decoding runs per tile read, lane-wise in
 * {@link VectorDecodeOps}. The one-value forms here define the bits of both ({@code HalfFloatTest}
 * holds the lane-wise forms to them over all 65536 patterns and over random and edge floats).
 *
 * <p>Both encoders round to nearest, ties to even. A finite value whose rounding overflows is
 * not encoded: callers check {@link #overflowsF16}/{@link #overflowsBf16} first and reject it.
 * NaN encodes as a quiet NaN of the same sign (F16: the canonical {@code 0x7e00}; BF16: the
 * upper half with the quiet bit set), the same on every JIT tier.
 */
final class HalfFloat {
    /** The smallest magnitude F16 rounds to infinity: halfway between 65504 and 2¹⁶, a tie that goes to even (2¹⁶). */
    static final float F16_OVERFLOW = 65520f;
    /** The float bits of the smallest magnitude BF16 rounds to infinity ({@code 0x7f7f8000}, 3.3961776e38). */
    static final int BF16_OVERFLOW_BITS = 0x7f7f8000;
    /** {@code 2¹¹²}: scales an F16 exponent (bias 15) placed in a float's exponent field (bias 127). */
    static final float F16_SCALE = 0x1p112f;
    /** {@code 112 << 23}: adds 112 to the exponent field of a float, which is {@link #F16_SCALE} on a normal float. */
    static final int F16_REBIAS = 112 << 23;
    /** {@code 2⁻¹⁴}: the smallest normal F16. */
    static final float F16_MIN_NORMAL = 0x1p-14f;
    /** An F16 with all exponent bits set is an infinity or a NaN. */
    static final int F16_EXP = 0x7c00;
    /** A float with all exponent bits set is an infinity or a NaN. */
    static final int F32_EXP = 0x7f800000;

    private HalfFloat() {
    }

    /** Whether finite {@code x} rounds to an F16 infinity. */
    static boolean overflowsF16(float x) {
        return Math.abs(x) >= F16_OVERFLOW && Float.isFinite(x);
    }

    /** Whether finite {@code x} rounds to a BF16 infinity. */
    static boolean overflowsBf16(float x) {
        return (Float.floatToRawIntBits(x) & 0x7fffffff) >= BF16_OVERFLOW_BITS && Float.isFinite(x);
    }

    /** {@code x} rounded to F16 ({@link Float#floatToFloat16}, NaN made canonical). */
    static short toF16(float x) {
        if (Float.isNaN(x)) {
            return (short) ((Float.floatToRawIntBits(x) >>> 16 & 0x8000) | 0x7e00);
        }
        return Float.floatToFloat16(x);
    }

    /**
     * The float value of F16 bits {@code h}: the exponent and significand shifted into a float's
     * fields with 112 added to the exponent, which is the value when the F16 is normal (or an
     * infinity or NaN); a subnormal F16 ({@code em < 0x400}) comes out as {@code 2⁻¹⁵ (1 + m/2¹⁰)}
     * for significand {@code m}, and {@code 2f - 2⁻¹⁴} (exact) is its value {@code m 2⁻²⁴}. No
     * float subnormal is ever an operand: a multiplication by 2¹¹² of the bits in place would take
     * one for every F16 subnormal, which costs a microcode assist per vector (25 times the
     * widening's time on all-subnormal rows, 1.7 times on weights of standard deviation 0.02).
     * Then, when they are those of an infinity or a NaN ({@code em > 0x7bff}, so
     * {@code 0x7bff - em} is negative and its arithmetic shift all ones), the exponent field
     * filled with ones, which keeps the significand bits; last the sign, bit 31 of the
     * sign-extended {@code h}.
     */
    static float fromF16(short h) {
        int em = h & 0x7fff;
        float f = Float.intBitsToFloat((em << 13) + F16_REBIAS);
        int magnitude = Float.floatToRawIntBits(f < F16_MIN_NORMAL ? Math.fma(f, 2f, -F16_MIN_NORMAL) : f);
        int special = (F16_EXP - 1 - em) >> 31 & F32_EXP;
        return Float.intBitsToFloat(magnitude | special | h & 0x80000000);
    }

    /**
     * {@code dst[dOff + i] = } the value of F16 bits {@code src[off + i]} for {@code i < n}, by
     * {@link Float#float16ToFloat}: C2 compiles this loop to the processor's conversion
     * ({@code vcvtph2ps}, 16 values per instruction with AVX-512, 8 with F16C), which the Vector
     * API cannot reach: one or two operations per vector against about ten for
     * {@link VectorWiden#f16Low}. Its result is stored and read back, which costs more than that
     * where the in-register widenings are cheap (F16 caches; jmh/README.md, "F16 weights through
     * the processor's conversion"), so only F16 weights, read from memory, take it. Every stored F16
     * pattern gets the bits of {@link #fromF16}: both conversions are exact, and the two differ
     * only on signalling NaNs, which the instruction quiets and {@link #toF16} never stores.
     */
    static void fromF16(short[] src, int off, float[] dst, int dOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = Float.float16ToFloat(src[off + i]);
        }
    }

    /** {@code x} rounded to BF16: the upper 16 bits after adding half an ulp minus one, plus the kept bit (ties to even). */
    static short toBf16(float x) {
        int bits = Float.floatToRawIntBits(x);
        if (Float.isNaN(x)) {
            return (short) (bits >>> 16 | 0x0040);
        }
        return (short) ((bits + 0x7fff + (bits >>> 16 & 1)) >>> 16);
    }

    /** The float value of BF16 bits {@code h}: they become the upper half of the float's bits. */
    static float fromBf16(short h) {
        return Float.intBitsToFloat(h << 16);
    }
}
