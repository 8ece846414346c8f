package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.util.Arrays;

/**
 * The narrowing of float32 rows to 16-bit floats on {@link Vectors#SPECIES} ({@link DecodeOps#toHalf},
 * {@link DecodeOps#anyHalfOverflow}), lane by lane the steps of {@link HalfFloat#toBf16} and
 * {@link HalfFloat#toF16} in integer arithmetic, so the bits are the same; and the INT8 block
 * quantizer ({@link DecodeOps#toInt8}). A cache appends every key and value through these: one
 * at a time, the scalar forms took 1 to 6 ns per value, 14% (16-bit) and 16% (INT8) of a decode
 * step of 32 conversations over 128 tokens each.
 */
final class VectorNarrow {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    /** L shorts: the narrowed lanes of one float vector. */
    private static final VectorSpecies<Short> HALF = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * L));
    /** The float bits of the smallest magnitude F16 holds as a normal number, 2⁻¹⁴. */
    private static final int F16_MIN_NORMAL_BITS = 0x38800000;
    /** The float bits of 0.5, whose ulp is 2⁻²⁴, the spacing of F16 subnormals. */
    private static final int HALF_BITS = 0x3f000000;
    /** L bytes: the quantized lanes of one float vector. */
    private static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, 8 * L)));
    /** {@code 1.5 · 2²³}: added to and subtracted from a float of magnitude under 2²², rounds it to an integer, ties to even. */
    private static final float ROUNDING = 0x1.8p23f;

    private VectorNarrow() {
    }

    static void toHalf(boolean bf16, float[] src, int off, int n, short[] dst, int dOff) {
        int i = 0;
        for (; i <= n - L; i += L) {
            IntVector bits = FloatVector.fromArray(S, src, off + i).reinterpretAsInts();
            IntVector h = bf16 ? bf16(bits) : f16(bits);
            ((ShortVector) h.convertShape(VectorOperators.I2S, HALF, 0)).intoArray(dst, dOff + i);
        }
        for (; i < n; i++) {
            dst[dOff + i] = bf16 ? HalfFloat.toBf16(src[off + i]) : HalfFloat.toF16(src[off + i]);
        }
    }

    /** {@link HalfFloat#toBf16} lane by lane: the upper half after adding half an ulp minus one and the kept bit; NaN quieted. */
    private static IntVector bf16(IntVector bits) {
        IntVector upper = bits.lanewise(VectorOperators.LSHR, 16);
        IntVector rounded = bits.add(0x7fff).add(upper.and(1)).lanewise(VectorOperators.LSHR, 16);
        return rounded.blend(upper.or(0x0040), bits.and(0x7fffffff).compare(VectorOperators.GT, HalfFloat.F32_EXP));
    }

    /**
     * {@link HalfFloat#toF16} lane by lane (round to nearest even, NaN made {@code 0x7e00} with its
     * sign). From 2⁻¹⁴ up, the magnitude's bits with half an ulp minus one and the kept bit 13
     * added, the exponent moved down by 112 and shifted into place, at most the infinity
     * {@code 0x7c00}; below, the magnitude plus 0.5 in float arithmetic, which rounds it to a
     * multiple of 2⁻²⁴, minus the bits of 0.5: the subnormal's significand (1024, the smallest
     * normal, when it rounds up).
     */
    private static IntVector f16(IntVector bits) {
        IntVector magnitude = bits.and(0x7fffffff);
        IntVector normal = magnitude.add(0xfff - (112 << 23)).add(magnitude.lanewise(VectorOperators.LSHR, 13).and(1))
                .lanewise(VectorOperators.LSHR, 13).min(HalfFloat.F16_EXP);
        IntVector subnormal = magnitude.reinterpretAsFloats().add(0.5f).reinterpretAsInts().sub(HALF_BITS);
        VectorMask<Integer> small = magnitude.compare(VectorOperators.LT, F16_MIN_NORMAL_BITS);
        VectorMask<Integer> nan = magnitude.compare(VectorOperators.GT, HalfFloat.F32_EXP);
        return normal.blend(subnormal, small).blend(0x7e00, nan).or(bits.lanewise(VectorOperators.LSHR, 16).and(0x8000));
    }

    /**
     * {@link DecodeOps#toInt8}: the block's largest magnitude as a lane-wise maximum (Java's, so a
     * NaN carries through) reduced once, the same division by 127; then each quotient rounded to
     * an integer by adding and subtracting 1.5 · 2²³ (ties to even, as {@code Math.rint}; the
     * quotients of a finite block are at most 127 and a rounding), clamped and narrowed.
     */
    static float toInt8(float[] src, int off, int n, byte[] dst, int dOff) {
        FloatVector top = FloatVector.zero(S);
        int i = 0;
        for (; i <= n - L; i += L) {
            top = top.max(FloatVector.fromArray(S, src, off + i).abs());
        }
        float max = top.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            max = Math.max(max, Math.abs(src[off + i]));
        }
        float s = Int8Panels.scale(max);
        if (!(s > 0f)) {
            Arrays.fill(dst, dOff, dOff + n, (byte) 0);
            return s;
        }
        i = 0;
        if (L >= 8) {
            for (; i <= n - L; i += L) {
                FloatVector q = FloatVector.fromArray(S, src, off + i).div(s).add(ROUNDING).sub(ROUNDING);
                IntVector r = ((IntVector) q.convert(VectorOperators.F2I, 0)).max(-127).min(127);
                ((ByteVector) r.convertShape(VectorOperators.I2B, BYTES, 0)).intoArray(dst, dOff + i);
            }
        }
        for (; i < n; i++) {
            dst[dOff + i] = Int8Panels.quantize(src[off + i], s);
        }
        return s;
    }

    static boolean anyOverflow(boolean bf16, float[] src, int off, int n) {
        int from = bf16 ? HalfFloat.BF16_OVERFLOW_BITS : Float.floatToRawIntBits(HalfFloat.F16_OVERFLOW);
        int i = 0;
        for (; i <= n - L; i += L) {
            IntVector magnitude = FloatVector.fromArray(S, src, off + i).reinterpretAsInts().and(0x7fffffff);
            // Finite (below the infinity's bits) and at least the smallest magnitude that overflows.
            if (magnitude.compare(VectorOperators.GE, from).and(magnitude.compare(VectorOperators.LT, HalfFloat.F32_EXP)).anyTrue()) {
                return true;
            }
        }
        for (; i < n; i++) {
            if (bf16 ? HalfFloat.overflowsBf16(src[off + i]) : HalfFloat.overflowsF16(src[off + i])) {
                return true;
            }
        }
        return false;
    }
}
