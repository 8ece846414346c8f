package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The decode loops on {@link Vectors#SPECIES}: the bulk widenings of {@link DecodeOps} and its
 * products, over B rows widened by {@link VectorWiden}. The products hold a {@code 4 x 2V} block
 * of C in 8 accumulators and widen each B row in registers right before its fused
 * multiply-adds, so a narrow cache is read once, at its own width: decoding a whole key tile (32 KiB of floats at d = 128, with the 64-key tiles of the
 * time) into scratch first and reading it back cost about what the narrower reads saved. Four
 * rows, not the micro-kernel's six: a grouped-query decode step has four query rows per
 * key/value head (32 over 8), and on AVX2's 16 vector registers the widening needs room beside
 * the accumulators. A product first copies its A rows into a per-thread buffer laid out by
 * depth ({@link #byDepth}: the four elements of step p side by side), so that the four broadcasts
 * of a step read one index and three constant offsets. Read as rows in place, each broadcast
 * had its own row index, which C2 kept on the stack and reloaded in every step (seen in the
 * disassembly). Rows past {@code mr} are copies of the last valid row (nothing past A's last row
 * is read), and their accumulators are never stored. Plain harness, not JMH: a 4-row product
 * over eight float32 key panels in L1 (128 deep) took 1.5 to 2.4 ns per step against 2.7 to
 * 3.4 ns through the micro-kernel, whose six rows do half as much work again for a decode step;
 * the INT8 key product gained about 5% (widening and scaling dominate it). The block is
 * stored through a per-thread buffer ({@link #store}), not from vector arguments of a helper,
 * which C2 would box when it declines to inline it. Products of one or two rows of A (plain
 * multi-head attention; two query rows per key/value head) go over their whole groups of full
 * panels in {@link VectorDecodeRow} or {@link VectorDecodePair} instead, and over the rest of
 * their panels here ({@link #fullGroups}).
 */
final class VectorDecodeOps implements DecodeOps {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    /** Per thread, the products' scratch. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /** A product's register block on its way to C, and its A laid out by depth ({@link #byDepth}). */
    private static final class Scratch {
        final float[] block = new float[PRODUCT_ROWS * NR];
        float[] byDepth = new float[PRODUCT_ROWS * AttentionKernel.BK];
    }

    VectorDecodeOps() {
        if (NR != Kernels.NR) {
            throw new IllegalStateException("decode rows of " + NR + " need panels of NR = " + NR + ", got " + Kernels.NR);
        }
    }

    @Override
    public void f16(short[] src, int off, float[] dst, int dOff, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            VectorWiden.f16(src, off + i).intoArray(dst, dOff + i);
        }
        for (; i < n; i++) {
            dst[dOff + i] = HalfFloat.fromF16(src[off + i]);
        }
    }

    @Override
    public void bf16(short[] src, int off, float[] dst, int dOff, int n) {
        int i = 0;
        for (; i <= n - L; i += L) {
            VectorWiden.bf16(src, off + i).intoArray(dst, dOff + i);
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
            VectorWiden.low(src, at).mul(s0).intoArray(dst, to);
            VectorWiden.high(src, at).mul(s1).intoArray(dst, to + L);
        }
    }

    @Override
    public void int8Rows(byte[] src, int off, float[] scales, int sOff, int sStride, float[] dst, int dOff, int rows) {
        for (int r = 0; r < rows; r++) {
            FloatVector s = FloatVector.broadcast(S, scales[sOff + r * sStride]);
            int at = off + r * NR;
            int to = dOff + r * NR;
            VectorWiden.low(src, at).mul(s).intoArray(dst, to);
            VectorWiden.high(src, at).mul(s).intoArray(dst, to + L);
        }
    }

    /**
     * A's first {@code kc} columns laid out by depth in the thread's scratch: element
     * {@code (i, p)} at {@code PRODUCT_ROWS * p + i}, rows past {@code mr} copies of the last
     * valid row (their accumulators are never stored).
     */
    private static float[] byDepth(Scratch scratch, float[] a, int aOff, int lda, int mr, int kc) {
        if (scratch.byDepth.length < PRODUCT_ROWS * kc) {
            scratch.byDepth = new float[PRODUCT_ROWS * kc];
        }
        float[] ad = scratch.byDepth;
        int r1 = mr > 1 ? aOff + lda : aOff;
        int r2 = mr > 2 ? r1 + lda : r1;
        int r3 = mr > 3 ? r2 + lda : r2;
        for (int p = 0; p < kc; p++) {
            int at = PRODUCT_ROWS * p;
            ad[at] = a[aOff + p];
            ad[at + 1] = a[r1 + p];
            ad[at + 2] = a[r2 + p];
            ad[at + 3] = a[r3 + p];
        }
        return ad;
    }

    @Override
    public void floatProduct(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                             float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        int first = mr <= 2 ? fullGroups(panels, lastNr, 4) : 0;
        if (first > 0) {
            for (int i = 0; i < mr; i++) {
                VectorDecodeRow.floats(kc, a, aOff + i * lda, b, bOff, bStride, first / 4, c, cOff + i * ldc, accumulate);
            }
            if (first == panels) {
                return;
            }
        }
        Scratch scratch = SCRATCH.get();
        float[] block = scratch.block;
        float[] ad = byDepth(scratch, a, aOff, lda, mr, kc);
        for (int t = first; t < panels; t++) {
            int bt = bOff + t * bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                int ai = PRODUCT_ROWS * p;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av = FloatVector.broadcast(S, ad[ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, ad[ai + 1]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, ad[ai + 2]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, ad[ai + 3]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
            }
            c00.intoArray(block, 0);
            c01.intoArray(block, L);
            c10.intoArray(block, NR);
            c11.intoArray(block, NR + L);
            c20.intoArray(block, 2 * NR);
            c21.intoArray(block, 2 * NR + L);
            c30.intoArray(block, 3 * NR);
            c31.intoArray(block, 3 * NR + L);
            store(block, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, accumulate);
        }
    }

    @Override
    public void halfProduct(boolean bf16, boolean finite, int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int panels,
                            float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        int first = 0;
        if ((bf16 || finite) && mr == 1) {
            first = fullGroups(panels, lastNr, bf16 ? 4 : 2);
            if (bf16) {
                VectorDecodeRow.bf16(kc, a, aOff, b, bOff, bStride, first / 4, c, cOff, accumulate);
            } else {
                VectorDecodeRow.finiteF16(kc, a, aOff, b, bOff, bStride, first / 2, c, cOff, accumulate);
            }
        } else if ((bf16 || finite) && mr == 2) {
            first = fullGroups(panels, lastNr, 2);
            VectorDecodePair.half(bf16, kc, a, aOff, lda, b, bOff, bStride, first / 2, c, cOff, ldc, accumulate);
        }
        if (first == panels) {
            return;
        }
        Scratch scratch = SCRATCH.get();
        float[] block = scratch.block;
        float[] ad = byDepth(scratch, a, aOff, lda, mr, kc);
        for (int t = first; t < panels; t++) {
            int bt = bOff + t * bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                int ai = PRODUCT_ROWS * p;
                FloatVector b0 = bf16 ? VectorWiden.bf16(b, bi) : finite ? VectorWiden.finiteF16(b, bi) : VectorWiden.f16(b, bi);
                FloatVector b1 = bf16 ? VectorWiden.bf16(b, bi + L) : finite ? VectorWiden.finiteF16(b, bi + L) : VectorWiden.f16(b, bi + L);
                FloatVector av = FloatVector.broadcast(S, ad[ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, ad[ai + 1]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, ad[ai + 2]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, ad[ai + 3]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
            }
            c00.intoArray(block, 0);
            c01.intoArray(block, L);
            c10.intoArray(block, NR);
            c11.intoArray(block, NR + L);
            c20.intoArray(block, 2 * NR);
            c21.intoArray(block, 2 * NR + L);
            c30.intoArray(block, 3 * NR);
            c31.intoArray(block, 3 * NR + L);
            store(block, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, accumulate);
        }
    }

    @Override
    public void int8Keys(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                         float[] scales, int sOff, int sPanel, int block, float[] c, int cOff, int ldc, int mr, int lastNr) {
        int first = 0;
        if (mr == 1) {
            first = fullGroups(panels, lastNr, 4);
            VectorDecodeRow.int8Keys(kc, a, aOff, b, bOff, bStride, first / 4, scales, sOff, sPanel, block, c, cOff);
        } else if (mr == 2) {
            first = fullGroups(panels, lastNr, 2);
            VectorDecodePair.int8Keys(kc, a, aOff, lda, b, bOff, bStride, first / 2, scales, sOff, sPanel, block, c, cOff, ldc);
        }
        if (first == panels) {
            return;
        }
        Scratch scratch = SCRATCH.get();
        float[] out = scratch.block;
        float[] ad = byDepth(scratch, a, aOff, lda, mr, kc);
        for (int t = first; t < panels; t++) {
            int bt = bOff + t * bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p0 = 0; p0 < kc; p0 += block) {
                int si = sOff + t * sPanel + p0 / block * NR;
                FloatVector s0 = FloatVector.fromArray(S, scales, si);
                FloatVector s1 = FloatVector.fromArray(S, scales, si + L);
                for (int p = p0; p < Math.min(kc, p0 + block); p++) {
                    int bi = bt + p * NR;
                    int ai = PRODUCT_ROWS * p;
                    FloatVector b0 = VectorWiden.low(b, bi).mul(s0);
                    FloatVector b1 = VectorWiden.high(b, bi).mul(s1);
                    FloatVector av = FloatVector.broadcast(S, ad[ai]);
                    c00 = av.fma(b0, c00);
                    c01 = av.fma(b1, c01);
                    av = FloatVector.broadcast(S, ad[ai + 1]);
                    c10 = av.fma(b0, c10);
                    c11 = av.fma(b1, c11);
                    av = FloatVector.broadcast(S, ad[ai + 2]);
                    c20 = av.fma(b0, c20);
                    c21 = av.fma(b1, c21);
                    av = FloatVector.broadcast(S, ad[ai + 3]);
                    c30 = av.fma(b0, c30);
                    c31 = av.fma(b1, c31);
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
            store(out, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, false);
        }
    }

    @Override
    public void int8Values(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                           float[] scales, int sOff, int sRow, int block, float[] c, int cOff, int ldc, int mr) {
        int first = 0;
        if (mr == 1) {
            first = fullGroups(panels, NR, 4);
            VectorDecodeRow.int8Values(kc, a, aOff, b, bOff, bStride, first / 4, scales, sOff, sRow, block, c, cOff);
        } else if (mr == 2) {
            first = fullGroups(panels, NR, 2);
            VectorDecodePair.int8Values(kc, a, aOff, lda, b, bOff, bStride, first / 2, scales, sOff, sRow, block, c, cOff, ldc);
        }
        if (first == panels) {
            return;
        }
        Scratch scratch = SCRATCH.get();
        float[] out = scratch.block;
        float[] ad = byDepth(scratch, a, aOff, lda, mr, kc);
        for (int t = first; t < panels; t++) {
            int bt = bOff + t * bStride;
            int st = sOff + t * NR / block;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                int ai = PRODUCT_ROWS * p;
                FloatVector s = FloatVector.broadcast(S, scales[st + p * sRow]);
                FloatVector b0 = VectorWiden.low(b, bi).mul(s);
                FloatVector b1 = VectorWiden.high(b, bi).mul(s);
                FloatVector av = FloatVector.broadcast(S, ad[ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, ad[ai + 1]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, ad[ai + 2]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, ad[ai + 3]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
            }
            c00.intoArray(out, 0);
            c01.intoArray(out, L);
            c10.intoArray(out, NR);
            c11.intoArray(out, NR + L);
            c20.intoArray(out, 2 * NR);
            c21.intoArray(out, 2 * NR + L);
            c30.intoArray(out, 3 * NR);
            c31.intoArray(out, 3 * NR + L);
            store(out, c, cOff + t * NR, ldc, mr, NR, true);
        }
    }

    /**
     * How many leading panels of a product go to the one- and two-row loops: its whole groups of
     * {@code group} full panels. The rest (fewer than a group, and a last panel narrower than NR)
     * takes the 4-row loop here. One row: groups of four panels ({@link VectorDecodeRow}; finite
     * F16 two). Two rows (two query rows per key/value head, as in Gemma 2 and 3): float32
     * panels take one pass of the single-row loop per row, which took whole decode steps to 0.70
     * to 0.88x the time of one 4-row pass; narrow panels take {@link VectorDecodePair}, which
     * widens each B row once for both rows (two single-row passes widened every value twice and
     * took 1.01 to 1.37x; jmh/README.md, "Two query rows per key/value head").
     */
    private static int fullGroups(int panels, int lastNr, int group) {
        int full = lastNr == NR ? panels : panels - 1;
        return full / group * group;
    }

    /** Writes (or adds, when {@code accumulate}) the {@code mr x nr} corner of a register block stored row by row, NR apart, into C. */
    private static void store(float[] block, float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        for (int i = 0; i < mr; i++) {
            int row = cOff + i * ldc;
            if (nr == NR) {
                FloatVector v0 = FloatVector.fromArray(S, block, i * NR);
                FloatVector v1 = FloatVector.fromArray(S, block, i * NR + L);
                if (accumulate) {
                    v0 = v0.add(FloatVector.fromArray(S, c, row));
                    v1 = v1.add(FloatVector.fromArray(S, c, row + L));
                }
                v0.intoArray(c, row);
                v1.intoArray(c, row + L);
            } else {
                for (int j = 0; j < nr; j++) {
                    c[row + j] = accumulate ? c[row + j] + block[i * NR + j] : block[i * NR + j];
                }
            }
        }
    }
}
