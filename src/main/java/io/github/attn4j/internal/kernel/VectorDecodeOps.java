package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The decode loops on {@link Vectors#SPECIES}: the bulk widenings of {@link DecodeOps} and its
 * products, over B rows widened by {@link VectorWiden}. The products hold a {@code 4 x 2V} block
 * of C in 8 accumulators and widen each B row in registers right before its fused
 * multiply-adds, so a narrow cache is read once, at its own width: decoding a whole key tile
 * into float32 scratch first and reading it back cost about what the narrower reads saved. Four
 * rows, not the micro-kernel's six or twelve: a grouped-query decode step has four query rows
 * per key/value head (32 over 8), and on AVX2's 16 vector registers the widening needs room
 * beside the accumulators.
 *
 * <p>A product hands each panel to a small method per kind of B ({@link VectorDecodeBlocks})
 * that reads the four rows of A in place and leaves the block in a per-thread buffer, which
 * {@link #store} writes or adds into C. With the reduction inside the whole product (its
 * arguments and panel loop live across it), C2 ran out of general registers: it kept B's array
 * on the stack and A's in a vector register, moved back and forth in every step, and the
 * products copied A into a by-depth buffer to spare index registers, a scalar pass that took 8
 * to 10% of a BF16 or INT8 decode step (JFR). Alone, the loop has neither (seen in the
 * disassembly). Plain harness, 128 deep, four panels in L2, ns per step in two runs before and
 * two after: float32 1.77 / 1.96 and 1.69 / 1.52, F16 3.13 / 3.62 and 2.91 / 2.64, finite F16
 * 2.06 / 2.65 and 1.65 / 1.68, INT8 values 1.89 / 2.01 and 1.71 / 1.67; BF16 and INT8 keys
 * within the noise (jmh/README.md, "KV cache precision"). Rows past {@code mr} read the last
 * valid row (nothing past A's last row is read), and their accumulators are never stored.
 * Products of one or two rows of A (plain multi-head attention; two query rows per key/value
 * head) go over their whole groups of full panels in {@link VectorDecodeRow} or
 * {@link VectorDecodePair} instead, and over the rest of their panels here ({@link #fullGroups}).
 * With 32 vector registers, three or four rows over float32, BF16 and finite F16 panels take
 * two panels per block ({@link VectorDecodeWide}), one panel only for an odd last one.
 */
final class VectorDecodeOps implements DecodeOps {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;
    /** Per thread, a product's register block (or two, {@link VectorDecodeWide}) on its way to C. */
    private static final ThreadLocal<float[]> BLOCK = ThreadLocal.withInitial(() -> new float[2 * PRODUCT_ROWS * NR]);

    VectorDecodeOps() {
        if (NR != Kernels.NR) {
            throw new IllegalStateException("decode rows of " + NR + " need panels of NR = " + NR + ", got " + Kernels.NR);
        }
    }

    @Override
    public void toHalf(boolean bf16, float[] src, int off, int n, short[] dst, int dOff) {
        VectorNarrow.toHalf(bf16, src, off, n, dst, dOff);
    }

    @Override
    public boolean anyHalfOverflow(boolean bf16, float[] src, int off, int n) {
        return VectorNarrow.anyOverflow(bf16, src, off, n);
    }

    @Override
    public float toInt8(float[] src, int off, int n, byte[] dst, int dOff) {
        return VectorNarrow.toInt8(src, off, n, dst, dOff);
    }

    @Override
    public void halfRows(boolean bf16, short[] src, int off, float[] dst, int dOff, int rows) {
        for (int r = 0; r < rows; r++) {
            int at = off + r * NR;
            int to = dOff + r * NR;
            (bf16 ? VectorWiden.bf16Low(src, at) : VectorWiden.f16Low(src, at)).intoArray(dst, to);
            (bf16 ? VectorWiden.bf16High(src, at) : VectorWiden.f16High(src, at)).intoArray(dst, to + L);
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

    /** Offset of row {@code i} of A, or of its last valid row when {@code i >= mr}. */
    private static int row(int aOff, int lda, int mr, int i) {
        return aOff + Math.min(i, mr - 1) * lda;
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
        float[] out = BLOCK.get();
        int r1 = row(aOff, lda, mr, 1), r2 = row(aOff, lda, mr, 2), r3 = row(aOff, lda, mr, 3);
        int t = first;
        for (; VectorDecodeWide.FITS && t + 1 < panels; t += 2) {
            VectorDecodeWide.floatPair(kc, a, aOff, r1, r2, r3, b, bOff + t * bStride, bOff + (t + 1) * bStride, out);
            storePair(out, c, cOff + t * NR, ldc, mr, t + 1 == panels - 1 ? lastNr : NR, accumulate);
        }
        for (; t < panels; t++) {
            VectorDecodeBlocks.floatBlock(kc, a, aOff, r1, r2, r3, b, bOff + t * bStride, out);
            store(out, 0, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, accumulate);
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
        float[] out = BLOCK.get();
        int r1 = row(aOff, lda, mr, 1), r2 = row(aOff, lda, mr, 2), r3 = row(aOff, lda, mr, 3);
        int t = first;
        for (; VectorDecodeWide.FITS && (bf16 || finite) && t + 1 < panels; t += 2) {
            int bt = bOff + t * bStride;
            if (bf16) {
                VectorDecodeWide.bf16Pair(kc, a, aOff, r1, r2, r3, b, bt, bt + bStride, out);
            } else {
                VectorDecodeWide.finiteF16Pair(kc, a, aOff, r1, r2, r3, b, bt, bt + bStride, out);
            }
            storePair(out, c, cOff + t * NR, ldc, mr, t + 1 == panels - 1 ? lastNr : NR, accumulate);
        }
        for (; t < panels; t++) {
            int bt = bOff + t * bStride;
            if (bf16) {
                VectorDecodeBlocks.bf16Block(kc, a, aOff, r1, r2, r3, b, bt, out);
            } else if (finite) {
                VectorDecodeBlocks.finiteF16Block(kc, a, aOff, r1, r2, r3, b, bt, out);
            } else {
                VectorDecodeBlocks.f16Block(kc, a, aOff, r1, r2, r3, b, bt, out);
            }
            store(out, 0, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, accumulate);
        }
    }

    /**
     * Four rows with 32 vector registers ({@link VectorDecodeWide#f16WeightPair}), else two:
     * pairs of rows, each pair reading the group of panels again, took 1.19 to 1.23x the time of
     * the micro-kernel over the group widened once at three and four rows, the four-row loop 0.72
     * to 0.84x (jmh/README.md, "F16 rows per widened chunk").
     */
    @Override
    public int f16WeightRows() {
        return VectorDecodeWide.FITS ? PRODUCT_ROWS : 2;
    }

    @Override
    public void f16WeightProduct(int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int panels,
                                 float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        // Each loop widens a chunk of its panels once for all its rows. Three or four rows
        // without 32 vector registers (never sent by MacroKernel, see f16WeightRows) and the
        // panels past the loops' groups take the definition.
        float[] wide = GemmWorkspace.current().wide(4 * VectorDecodeRow.F16_DEPTH * NR);
        int first = 0;
        if (mr == 1) {
            first = fullGroups(panels, lastNr, 4);
            VectorDecodeRow.f16Weights(kc, a, aOff, b, bOff, bStride, first / 4, c, cOff, accumulate, wide);
        } else if (mr == 2) {
            first = fullGroups(panels, lastNr, 2);
            VectorDecodePair.f16Weights(kc, a, aOff, lda, b, bOff, bStride, first / 2, c, cOff, ldc, accumulate, wide);
        } else if (VectorDecodeWide.FITS) {
            first = fullGroups(panels, lastNr, 2);
            float[] out = BLOCK.get();
            int r1 = row(aOff, lda, mr, 1), r2 = row(aOff, lda, mr, 2), r3 = row(aOff, lda, mr, 3);
            for (int t = 0; t < first; t += 2) {
                int bt = bOff + t * bStride;
                VectorDecodeWide.f16WeightPair(kc, a, aOff, r1, r2, r3, b, bt, bt + bStride, wide, out);
                storePair(out, c, cOff + t * NR, ldc, mr, NR, accumulate);
            }
        }
        if (first < panels) {
            DecodeOps.super.f16WeightProduct(kc, a, aOff, lda, b, bOff + first * bStride, bStride, panels - first,
                    c, cOff + first * NR, ldc, mr, lastNr, accumulate);
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
        float[] out = BLOCK.get();
        int r1 = row(aOff, lda, mr, 1), r2 = row(aOff, lda, mr, 2), r3 = row(aOff, lda, mr, 3);
        for (int t = first; t < panels; t++) {
            VectorDecodeBlocks.int8KeyBlock(kc, a, aOff, r1, r2, r3, b, bOff + t * bStride, scales, sOff + t * sPanel, block, out);
            store(out, 0, c, cOff + t * NR, ldc, mr, t == panels - 1 ? lastNr : NR, false);
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
        float[] out = BLOCK.get();
        int r1 = row(aOff, lda, mr, 1), r2 = row(aOff, lda, mr, 2), r3 = row(aOff, lda, mr, 3);
        for (int t = first; t < panels; t++) {
            VectorDecodeBlocks.int8ValueBlock(kc, a, aOff, r1, r2, r3, b, bOff + t * bStride, scales, sOff + t * NR / block, sRow, out);
            store(out, 0, c, cOff + t * NR, ldc, mr, NR, true);
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

    /** {@link #store} of the two register blocks of a {@link VectorDecodeWide} pair, the second {@code nr} wide. */
    private static void storePair(float[] block, float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        store(block, 0, c, cOff, ldc, mr, NR, accumulate);
        store(block, PRODUCT_ROWS * NR, c, cOff + NR, ldc, mr, nr, accumulate);
    }

    /**
     * Writes (or adds, when {@code accumulate}) the {@code mr x nr} corner of a register block
     * stored row by row, NR apart, from {@code block[at]}, into C.
     */
    private static void store(float[] block, int at, float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        if (nr < NR) {
            VectorMicroKernel.copyCorner(block, at, c, cOff, ldc, mr, nr, accumulate);
            return;
        }
        for (int i = 0; i < mr; i++) {
            int row = cOff + i * ldc;
            FloatVector v0 = FloatVector.fromArray(S, block, at + i * NR);
            FloatVector v1 = FloatVector.fromArray(S, block, at + i * NR + L);
            if (accumulate) {
                v0 = v0.add(FloatVector.fromArray(S, c, row));
                v1 = v1.add(FloatVector.fromArray(S, c, row + L));
            }
            v0.intoArray(c, row);
            v1.intoArray(c, row + L);
        }
    }
}
