package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The widenings of narrow panel rows to float32 on {@link Vectors#SPECIES}: L F16 values or bytes
 * are loaded and widened to L int
 * or float lanes ({@code S2I}, {@code B2F}), then the steps of {@link HalfFloat}'s one-value
 * forms run lane-wise; a scalar tail takes the last {@code n % L} elements of the F16 loop
 * (INT8 rows are NR = 2L wide, so they have none). A BF16 row of NR values is loaded whole and
 * split into its two vectors without widening moves, thanks to its stored order
 * ({@link #bf16Low}, {@link #bf16High}). JDK 25's Vector API has no half-float
 * conversion, so F16 is widened with integer shifts and one exact multiplication by 2¹¹²; the
 * infinity/NaN lanes get their exponent from an arithmetic shift rather than a compare and a
 * blend, which made the loop 1.5 times slower on AVX2. A product over panels its caller knows
 * to be finite (F16 values, and keys whose tile holds no infinity or NaN) widens them in three
 * steps instead ({@link #finiteF16}), which took the F16 decode step over 16384 tokens from
 * about the F32 step's time to 0.55 to 0.6x of it on one thread (jmh/README.md, "KV cache
 * precision").
 *
 * <p>An INT8 row of NR = 2L bytes is read as two L-byte vectors, or at L = 4, where there is no
 * 32-bit byte species, as one 8-byte vector whose two halves are widened apart.
 *
 * <p>Every product that reads a narrow panel ({@link VectorDecodeOps}, {@link VectorDecodeRow},
 * {@link VectorMicroKernel#halfRow}) widens its B rows here, in registers, right before their
 * fused multiply-adds.
 */
final class VectorWiden {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, S.vectorShape());
    private static final VectorSpecies<Short> H = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * L));
    /** NR = 2L shorts: a whole panel row of 16-bit values, the width of {@link #S}. */
    private static final VectorSpecies<Short> ROW = VectorSpecies.of(short.class, S.vectorShape());
    /** Whether L bytes make a vector shape (64 bits at least); if not, a row is one vector of NR bytes. */
    private static final boolean HALF_ROWS = 8 * L >= 64;
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF_ROWS ? 8 * L : 8 * NR));

    private VectorWiden() {
    }

    /** The L F16 values at {@code src[at]}, widened (also {@link VectorMicroKernel#halfRow}'s B loads). */
    static FloatVector f16(short[] src, int at) {
        IntVector h = (IntVector) ShortVector.fromArray(H, src, at).convertShape(VectorOperators.S2I, I, 0);
        IntVector em = h.and(0x7fff);
        IntVector magnitude = em.lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(HalfFloat.F16_SCALE).reinterpretAsInts();
        IntVector special = em.neg().add(HalfFloat.F16_EXP - 1).lanewise(VectorOperators.ASHR, 31).and(HalfFloat.F32_EXP);
        return magnitude.or(special).or(h.and(0x80000000)).reinterpretAsFloats();
    }

    /**
     * The L F16 values at {@code src[at]}, none of them an infinity or NaN, widened in three
     * steps instead of {@link #f16}'s ten: the sign-extended lanes shifted left by 13 hold the
     * exponent and mantissa at their float32 places and copies of the sign in bits 28 to 31;
     * clearing bits 28 to 30 leaves a float32 of the same sign whose exponent is 112 too small
     * (a subnormal F16 becomes a subnormal float32), which the exact multiplication by 2¹¹²
     * puts right. An F16 infinity or NaN would come out as a finite number.
     */
    static FloatVector finiteF16(short[] src, int at) {
        IntVector h = (IntVector) ShortVector.fromArray(H, src, at).convertShape(VectorOperators.S2I, I, 0);
        return h.lanewise(VectorOperators.LSHL, 13).and(0x8fffffff).reinterpretAsFloats().mul(HalfFloat.F16_SCALE);
    }

    /**
     * Columns {@code [0, L)} of the BF16 panel row of NR = 2L values at {@code src[at]}, stored in
     * pairs ({@link Packing#bf16Slot}): the row read as L int lanes holds column {@code j} in the
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

    /** The NR shorts at {@code src[at]} as L int lanes (a full-width load; C2 shares it between {@link #bf16Low} and {@link #bf16High}). */
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
