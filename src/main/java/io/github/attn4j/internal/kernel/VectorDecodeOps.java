package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The decode loops on {@link Vectors#SPECIES}: L shorts or bytes are loaded and widened to L int
 * or float lanes ({@code S2I}, {@code B2F}), then the steps of {@link HalfFloat}'s one-value
 * forms run lane-wise; a scalar tail takes the last {@code n % L} elements of the 16-bit loops
 * (INT8 rows are NR = 2L wide, so they have none). JDK 25's Vector API has no half-float
 * conversion, so F16 is widened with integer shifts and one exact multiplication by 2¹¹²; the
 * infinity/NaN lanes get their exponent from an arithmetic shift rather than a compare and a
 * blend, which made the loop 1.5 times slower on AVX2.
 *
 * <p>An INT8 row of NR = 2L bytes is read as two L-byte vectors, or at L = 4, where there is no
 * 32-bit byte species, as one 8-byte vector whose two halves are widened apart.
 */
final class VectorDecodeOps implements DecodeOps {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, S.vectorShape());
    private static final VectorSpecies<Short> H = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * L));
    /** Whether L bytes make a vector shape (64 bits at least); if not, a row is one vector of NR bytes. */
    private static final boolean HALF_ROWS = 8 * L >= 64;
    private static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(HALF_ROWS ? 8 * L : 8 * NR));

    VectorDecodeOps() {
        if (NR != Kernels.NR) {
            throw new IllegalStateException("decode rows of " + NR + " need panels of NR = " + NR + ", got " + Kernels.NR);
        }
    }

    @Override
    public void f16(short[] src, int off, float[] dst, int dOff, int n) {
        FloatVector scale = FloatVector.broadcast(S, HalfFloat.F16_SCALE);
        IntVector largestFinite = IntVector.broadcast(I, HalfFloat.F16_EXP - 1);
        int i = 0;
        for (; i <= n - L; i += L) {
            IntVector h = (IntVector) ShortVector.fromArray(H, src, off + i).convertShape(VectorOperators.S2I, I, 0);
            IntVector em = h.and(0x7fff);
            IntVector magnitude = em.lanewise(VectorOperators.LSHL, 13).reinterpretAsFloats().mul(scale).reinterpretAsInts();
            IntVector special = largestFinite.sub(em).lanewise(VectorOperators.ASHR, 31).and(HalfFloat.F32_EXP);
            magnitude.or(special).or(h.and(0x80000000)).reinterpretAsFloats().intoArray(dst, dOff + i);
        }
        for (; i < n; i++) {
            dst[dOff + i] = HalfFloat.fromF16(src[off + i]);
        }
    }

    @Override
    public void bf16(short[] src, int off, float[] dst, int dOff, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            IntVector h = (IntVector) ShortVector.fromArray(H, src, off + i).convertShape(VectorOperators.S2I, I, 0);
            h.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().intoArray(dst, dOff + i);
        }
        for (; i < n; i++) {
            dst[dOff + i] = HalfFloat.fromBf16(src[off + i]);
        }
    }

    @Override
    public void int8Columns(byte[] src, int off, float[] scales, int sOff, float[] dst, int dOff, int rows) {
        FloatVector s0 = FloatVector.fromArray(S, scales, sOff);
        FloatVector s1 = FloatVector.fromArray(S, scales, sOff + L);
        for (int r = 0; r < rows; r++) {
            int at = off + r * NR;
            int to = dOff + r * NR;
            ByteVector first = ByteVector.fromArray(B, src, at);
            ByteVector second = HALF_ROWS ? ByteVector.fromArray(B, src, at + L) : first;
            ((FloatVector) first.convertShape(VectorOperators.B2F, S, 0)).mul(s0).intoArray(dst, to);
            ((FloatVector) second.convertShape(VectorOperators.B2F, S, HALF_ROWS ? 0 : 1)).mul(s1).intoArray(dst, to + L);
        }
    }

    @Override
    public void int8Rows(byte[] src, int off, float[] scales, int sOff, int sStride, float[] dst, int dOff, int rows) {
        for (int r = 0; r < rows; r++) {
            FloatVector s = FloatVector.broadcast(S, scales[sOff + r * sStride]);
            int at = off + r * NR;
            int to = dOff + r * NR;
            ByteVector first = ByteVector.fromArray(B, src, at);
            ByteVector second = HALF_ROWS ? ByteVector.fromArray(B, src, at + L) : first;
            ((FloatVector) first.convertShape(VectorOperators.B2F, S, 0)).mul(s).intoArray(dst, to);
            ((FloatVector) second.convertShape(VectorOperators.B2F, S, HALF_ROWS ? 0 : 1)).mul(s).intoArray(dst, to + L);
        }
    }
}
