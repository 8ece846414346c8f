package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The widenings of narrow panel rows to float32 on {@link Vectors#SPECIES}. A 16-bit row of NR =
 * 2L values is stored in pairs ({@link Packing#halfSlot}) and loaded whole as L int lanes, column
 * {@code j} in the low half of lane {@code j} and column {@code L + j} in its high half; shifts
 * and masks take the two vectors apart, with no widening move. A BF16 value is the upper half of
 * its float32 ({@link #bf16Low}, {@link #bf16High}: one operation per vector). JDK 25's Vector
 * API has no half-float conversion, so F16 is widened to the bits of {@link HalfFloat#fromF16} by
 * integer shifts and an add, then, in the lanes a compare selects, one exact fused multiply-add
 * (subnormals) or an OR of the exponent bits (infinities and NaN). No float subnormal is an
 * operand, so no lane costs a microcode assist; the multiplication by 2¹¹² that widened F16
 * before took 1.9 times as long over weights of standard deviation 0.02 (a quarter of a percent
 * of them subnormal) as over N(0, 1) rows. With AVX2, which has no mask registers, the masked
 * steps cost more (jmh/README.md, "F16 subnormals").
 *
 * <p>A product over panels its caller knows to be finite (F16 cache values, and keys whose tile
 * holds no infinity or NaN) widens them in three or four steps instead ({@link #finiteF16Low},
 * {@link #finiteF16High}), which took the F16 decode step over 16384 tokens from about the F32
 * step's time to 0.55 to 0.6x of it on one thread (jmh/README.md, "KV cache precision"). Those
 * steps do multiply by 2¹¹², so each vector holding an F16 subnormal costs an assist: cache
 * values of standard deviation 0.1 make the product 1.2 times as slow as N(0, 1) ones, 0.03
 * 1.65 times, which is where the exact widening breaks even.
 *
 * <p>An INT8 row of NR = 2L bytes is read as two L-byte vectors, or at L = 4, where there is no
 * 32-bit byte species, as one 8-byte vector whose two halves are widened apart.
 *
 * <p>Every product that reads a narrow cache panel or BF16 weights ({@link VectorDecodeOps},
 * {@link VectorDecodeRow}, {@link VectorDecodePair}, {@link VectorDecodeWide},
 * {@link VectorDecodeBlocks}) widens its B rows here, in registers, right before their fused
 * multiply-adds. F16 weights are stored in column order and widened by the processor's own
 * conversion instead ({@link HalfFloat#fromF16(short[], int, float[], int, int)}).
 */
final class VectorWiden {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    /** NR = 2L shorts: a whole panel row of 16-bit values, the width of {@link #S}. */
    private static final VectorSpecies<Short> ROW = VectorSpecies.of(short.class, S.vectorShape());
    /** Whether L bytes make a vector shape (64 bits at least); if not, a row is one vector of NR bytes. */
    private static final boolean HALF_ROWS = 8 * L >= 64;
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF_ROWS ? 8 * L : 8 * NR));

    private VectorWiden() {
    }

    /**
     * Columns {@code [0, L)} of the F16 panel row of NR = 2L values at {@code src[at]}, stored in
     * pairs ({@link Packing#halfSlot}), widened exactly (infinities and NaN included): the low
     * halves of the row's L int lanes.
     */
    static FloatVector f16Low(short[] src, int at) {
        IntVector w = pairs(src, at);
        return f16(w.and(0x7fff), w.lanewise(VectorOperators.LSHL, 16).and(0x80000000));
    }

    /** Columns {@code [L, 2L)} of the F16 panel row at {@code src[at]} ({@link #f16Low}): the high halves. */
    static FloatVector f16High(short[] src, int at) {
        IntVector w = pairs(src, at);
        return f16(w.lanewise(VectorOperators.LSHR, 16).and(0x7fff), w.and(0x80000000));
    }

    /**
     * The F16 values of exponent-and-significand bits {@code em} and sign bits {@code sign} (at
     * bit 31), lane by lane as {@link HalfFloat#fromF16}.
     */
    private static FloatVector f16(IntVector em, IntVector sign) {
        FloatVector f = em.lanewise(VectorOperators.LSHL, 13).add(HalfFloat.F16_REBIAS).reinterpretAsFloats();
        VectorMask<Float> subnormal = f.compare(VectorOperators.LT, HalfFloat.F16_MIN_NORMAL);
        IntVector magnitude = f.lanewise(VectorOperators.FMA, 2f, -HalfFloat.F16_MIN_NORMAL, subnormal).reinterpretAsInts();
        VectorMask<Integer> special = em.compare(VectorOperators.GT, HalfFloat.F16_EXP - 1);
        return magnitude.lanewise(VectorOperators.OR, HalfFloat.F32_EXP, special).or(sign).reinterpretAsFloats();
    }

    /**
     * Columns {@code [0, L)} of the F16 panel row at {@code src[at]}, none of them an infinity or
     * NaN, widened in four steps instead of {@link #f16Low}'s: the low halves shifted to the top
     * of their lanes, then right by 3 with the sign copied, hold the exponent and significand at
     * their float32 places and copies of the sign in bits 28 to 31; clearing bits 28 to 30 (and
     * 0 to 12, zero here) leaves a float32 of the same sign whose exponent is 112 too small (a
     * subnormal F16 becomes a subnormal float32), which the exact multiplication by 2¹¹² puts
     * right. An F16 infinity or NaN would come out as a finite number.
     */
    static FloatVector finiteF16Low(short[] src, int at) {
        return finite(pairs(src, at).lanewise(VectorOperators.LSHL, 16));
    }

    /**
     * Columns {@code [L, 2L)} of the finite F16 panel row at {@code src[at]}
     * ({@link #finiteF16Low}): the high halves, already at the top, in three steps.
     */
    static FloatVector finiteF16High(short[] src, int at) {
        return finite(pairs(src, at));
    }

    /** The finite F16 values in the upper halves of {@code top}'s lanes (the lower halves are cleared). */
    private static FloatVector finite(IntVector top) {
        return top.lanewise(VectorOperators.ASHR, 3).and(0x8fffe000).reinterpretAsFloats().mul(HalfFloat.F16_SCALE);
    }

    /**
     * Columns {@code [0, L)} of the BF16 panel row of NR = 2L values at {@code src[at]}, stored in
     * pairs ({@link Packing#halfSlot}): the row read as L int lanes holds column {@code j} in the
     * low half of lane {@code j}, which a shift by 16 puts where float32 keeps its upper half.
     */
    static FloatVector bf16Low(short[] src, int at) {
        return pairs(src, at).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /**
     * Columns {@code [L, 2L)} of the BF16 panel row at {@code src[at]} ({@link #bf16Low}): the high
     * halves of the int lanes, already in place, with the low halves cleared.
     */
    static FloatVector bf16High(short[] src, int at) {
        return pairs(src, at).and(0xffff0000).reinterpretAsFloats();
    }

    /**
     * The NR shorts at {@code src[at]} as L int lanes: one full-width load, which C2 shares
     * between the two halves of a row ({@link #bf16Low} and {@link #bf16High}, and the F16 ones).
     */
    private static IntVector pairs(short[] src, int at) {
        return ShortVector.fromArray(ROW, src, at).reinterpretAsInts();
    }

    /** The first L of the NR bytes at {@code src[at]} as floats. */
    static FloatVector low(byte[] src, int at) {
        return (FloatVector) ByteVector.fromArray(B, src, at).convertShape(VectorOperators.B2F, S, 0);
    }

    /** The last L of the NR bytes at {@code src[at]} as floats. */
    static FloatVector high(byte[] src, int at) {
        return (FloatVector) ByteVector.fromArray(B, src, HALF_ROWS ? at + L : at).convertShape(VectorOperators.B2F, S, HALF_ROWS ? 0 : 1);
    }
}
