package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The 4 x 4V register blocks of {@link VectorDecodeOps}' products on a register file of 32
 * vectors ({@link #FITS}): two panels at once, B's panels from {@code bt} and {@code bu}, the four
 * rows of A read in place from {@code r0 .. r3}, the block of panel {@code bt} left in
 * {@code out} row by row, NR apart, and that of panel {@code bu} after it (rows 4 to 7). Each
 * element is the same chain of fused multiply-adds as in {@link VectorDecodeBlocks}, so the bits
 * are the same.
 *
 * <p>A decode step reads its cache from L3 or memory, and one panel at a time is one stream of
 * reads that the loop consumes at about the speed of memory: with two streams in flight the
 * hardware keeps more lines coming, and each broadcast of A feeds four multiply-adds instead of
 * two. Over a cache larger than L2, one thread, panels 128 deep, four query rows (a harness
 * alternating the loops over the same array, medians): float32 over 128 MiB 11.9 against 14.4 ms
 * (a read pass with four accumulators: 9.3), over 32 MiB 1.39 against 1.60 ms (read pass 1.39);
 * BF16 over 64 MiB 7.8 against 10.9 ms (read pass 6.8), over 16 MiB 0.91 against 1.05 ms (0.76).
 * Sixteen accumulators, four B vectors and a broadcast need 21 registers: AVX2's 16 would spill,
 * so narrower register files keep the one-panel blocks. So do INT8 panels and F16 keys that may
 * hold an infinity or NaN: INT8 pairs (values with two scale broadcasts per step, keys with their
 * totals in {@code out} between blocks, since the partial sums fill the registers) took 1.02 to
 * 1.07x the time of the one-panel blocks in decode steps over 4096 tokens (SideBySide, both
 * orders) and were within the noise over 16384.
 *
 * <p>The methods differ only in how B is loaded and stay written out, one per kind of panel,
 * for the reasons {@link VectorDecodeBlocks} gives (one method choosing its widening by flags
 * compiled into slower loops, and a helper taking the accumulators boxed them). F16 weights
 * ({@link #f16WeightPair}) are widened a chunk at a time into a buffer that both panels' loads
 * read; their chains run across chunks, so the loop cannot be {@link #floatPair} over each chunk
 * without storing and reloading the sixteen accumulators between chunks.
 */
final class VectorDecodeWide {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    /**
     * Whether the register file has 32 vectors: on the 512-bit path (AVX-512), or where the
     * micro-kernel's twelve-row block (24 accumulators) was chosen or forced.
     */
    static final boolean FITS = L >= 16 || Kernels.MR == VectorTallBlocks.ROWS;

    private VectorDecodeWide() {
    }

    static void floatPair(int kc, float[] a, int r0, int r1, int r2, int r3, float[] b, int bt, int bu, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S), c02 = FloatVector.zero(S), c03 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S), c12 = FloatVector.zero(S), c13 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S), c22 = FloatVector.zero(S), c23 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S), c32 = FloatVector.zero(S), c33 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            int bj = bu + p * NR;
            FloatVector b0 = FloatVector.fromArray(S, b, bi);
            FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
            FloatVector b2 = FloatVector.fromArray(S, b, bj);
            FloatVector b3 = FloatVector.fromArray(S, b, bj + L);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            c02 = av.fma(b2, c02);
            c03 = av.fma(b3, c03);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            c12 = av.fma(b2, c12);
            c13 = av.fma(b3, c13);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            c22 = av.fma(b2, c22);
            c23 = av.fma(b3, c23);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
            c32 = av.fma(b2, c32);
            c33 = av.fma(b3, c33);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
        c02.intoArray(out, 4 * NR);
        c03.intoArray(out, 4 * NR + L);
        c12.intoArray(out, 5 * NR);
        c13.intoArray(out, 5 * NR + L);
        c22.intoArray(out, 6 * NR);
        c23.intoArray(out, 6 * NR + L);
        c32.intoArray(out, 7 * NR);
        c33.intoArray(out, 7 * NR + L);
    }

    static void bf16Pair(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, int bu, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S), c02 = FloatVector.zero(S), c03 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S), c12 = FloatVector.zero(S), c13 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S), c22 = FloatVector.zero(S), c23 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S), c32 = FloatVector.zero(S), c33 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            int bj = bu + p * NR;
            FloatVector b0 = VectorWiden.bf16Low(b, bi);
            FloatVector b1 = VectorWiden.bf16High(b, bi);
            FloatVector b2 = VectorWiden.bf16Low(b, bj);
            FloatVector b3 = VectorWiden.bf16High(b, bj);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            c02 = av.fma(b2, c02);
            c03 = av.fma(b3, c03);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            c12 = av.fma(b2, c12);
            c13 = av.fma(b3, c13);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            c22 = av.fma(b2, c22);
            c23 = av.fma(b3, c23);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
            c32 = av.fma(b2, c32);
            c33 = av.fma(b3, c33);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
        c02.intoArray(out, 4 * NR);
        c03.intoArray(out, 4 * NR + L);
        c12.intoArray(out, 5 * NR);
        c13.intoArray(out, 5 * NR + L);
        c22.intoArray(out, 6 * NR);
        c23.intoArray(out, 6 * NR + L);
        c32.intoArray(out, 7 * NR);
        c33.intoArray(out, 7 * NR + L);
    }

    static void finiteF16Pair(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, int bu, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S), c02 = FloatVector.zero(S), c03 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S), c12 = FloatVector.zero(S), c13 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S), c22 = FloatVector.zero(S), c23 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S), c32 = FloatVector.zero(S), c33 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            int bj = bu + p * NR;
            FloatVector b0 = VectorWiden.finiteF16Low(b, bi);
            FloatVector b1 = VectorWiden.finiteF16High(b, bi);
            FloatVector b2 = VectorWiden.finiteF16Low(b, bj);
            FloatVector b3 = VectorWiden.finiteF16High(b, bj);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            c02 = av.fma(b2, c02);
            c03 = av.fma(b3, c03);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            c12 = av.fma(b2, c12);
            c13 = av.fma(b3, c13);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            c22 = av.fma(b2, c22);
            c23 = av.fma(b3, c23);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
            c32 = av.fma(b2, c32);
            c33 = av.fma(b3, c33);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
        c02.intoArray(out, 4 * NR);
        c03.intoArray(out, 4 * NR + L);
        c12.intoArray(out, 5 * NR);
        c13.intoArray(out, 5 * NR + L);
        c22.intoArray(out, 6 * NR);
        c23.intoArray(out, 6 * NR + L);
        c32.intoArray(out, 7 * NR);
        c33.intoArray(out, 7 * NR + L);
    }

    /**
     * F16 weight panels in column order, three or four rows of a projection: the chunk loop of
     * {@link VectorDecodeRow#f16Weights} over the two panels at {@code bt} and {@code bu}, every
     * {@link VectorDecodeRow#F16_DEPTH} steps widened into {@code wide} (at least
     * {@code 2 * F16_DEPTH * NR} floats) once for all four rows, whose chains stay in registers;
     * the blocks left in {@code out} as {@link #floatPair} leaves them.
     */
    static void f16WeightPair(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, int bu,
                              float[] wide, float[] out) {
        int w1 = VectorDecodeRow.F16_DEPTH * NR;
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S), c02 = FloatVector.zero(S), c03 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S), c12 = FloatVector.zero(S), c13 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S), c22 = FloatVector.zero(S), c23 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S), c32 = FloatVector.zero(S), c33 = FloatVector.zero(S);
        for (int p0 = 0; p0 < kc; p0 += VectorDecodeRow.F16_DEPTH) {
            int steps = Math.min(VectorDecodeRow.F16_DEPTH, kc - p0);
            HalfFloat.fromF16(b, bt + p0 * NR, wide, 0, steps * NR);
            HalfFloat.fromF16(b, bu + p0 * NR, wide, w1, steps * NR);
            for (int p = 0; p < steps; p++) {
                int o = p * NR;
                FloatVector b0 = FloatVector.fromArray(S, wide, o);
                FloatVector b1 = FloatVector.fromArray(S, wide, o + L);
                FloatVector b2 = FloatVector.fromArray(S, wide, w1 + o);
                FloatVector b3 = FloatVector.fromArray(S, wide, w1 + o + L);
                int q = p0 + p;
                FloatVector av = FloatVector.broadcast(S, a[r0 + q]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                c02 = av.fma(b2, c02);
                c03 = av.fma(b3, c03);
                av = FloatVector.broadcast(S, a[r1 + q]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                c12 = av.fma(b2, c12);
                c13 = av.fma(b3, c13);
                av = FloatVector.broadcast(S, a[r2 + q]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                c22 = av.fma(b2, c22);
                c23 = av.fma(b3, c23);
                av = FloatVector.broadcast(S, a[r3 + q]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
                c32 = av.fma(b2, c32);
                c33 = av.fma(b3, c33);
            }
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
        c02.intoArray(out, 4 * NR);
        c03.intoArray(out, 4 * NR + L);
        c12.intoArray(out, 5 * NR);
        c13.intoArray(out, 5 * NR + L);
        c22.intoArray(out, 6 * NR);
        c23.intoArray(out, 6 * NR + L);
        c32.intoArray(out, 7 * NR);
        c33.intoArray(out, 7 * NR + L);
    }
}
