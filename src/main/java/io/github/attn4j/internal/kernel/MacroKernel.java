package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.Kernels.MR;
import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * {@link Gemm}'s macro-kernel: the jr and ir loops over one packed block of A and a range of
 * columns of one packed block of B, and the choice of loop that computes each micro-tile (the
 * micro-kernel, a row loop over 16-bit panels, or the decode products' single-row loops).
 */
final class MacroKernel {
    /**
     * Products of at most this many rows of A (the projections of a decode step) over float32
     * or BF16 panels take {@link DecodeOps#floatProduct} or {@link DecodeOps#halfProduct}, whose
     * single-row loops hold four panels of one row in eight accumulators, instead of the
     * micro-kernel (which computes six or twelve rows for them and puts more instructions
     * between two cache lines of B) or {@link MicroKernel#halfRow} (one panel, two accumulators).
     * Same bits. A one-token forward at E = 4096 took 0.64 to 0.67x the time with float32
     * weights and 0.60 to 0.68x with BF16 weights, two tokens 0.64 to 0.87x (SideBySide, both
     * orders); with three or four tokens the 4-row loop was slower than the micro-kernel (1.06,
     * 1.14x), and F16 weights keep {@code halfRow} (their decode loop for one row widens only
     * panels known to be finite; one with the exact widening of weights passed C2's inlining
     * node limit at two panels and ran 3.6x slower, jmh/README.md, "F16 subnormals").
     */
    private static final int SINGLE_ROW_LOOPS = 2;

    private MacroKernel() {
    }

    /**
     * The ir and jr loops over one packed {@code mc x kc} block of A and columns
     * {@code [jFrom, jTo)} (jFrom a multiple of NR) of the packed B block, in groups of {@code nb}
     * columns: each A micro-panel stays in L1 while it sweeps the B micro-panels of a group, which
     * stay in L2 while every A micro-panel of the block sweeps them.
     *
     * <p>16-bit B panels are widened to float32 into this thread's buffer before the micro-kernel
     * reads them, exactly, so the bits are those of the float32 panels of the same values. With
     * several A micro-panels, a whole group is widened once and reused by all of them (the
     * widening is one pass against {@code mc} multiply-adds per element); with one (a decode
     * step's few rows, where reading B is the cost), the values are widened in registers as
     * they are loaded: by the single-row loops of {@link DecodeOps#halfProduct} for one or two
     * BF16 rows ({@link #SINGLE_ROW_LOOPS}), else by {@link MicroKernel#halfRow}, one row of A at
     * a time.
     *
     * <p>{@code depthRows > 0}: the block's full micro-panels of that many rows, and a last one of
     * {@link MicroKernel#depthTailRows()} rows, are packed by depth ({@link Packing#packA}) and go
     * to {@link MicroKernel#depthBlocks}; the caller passes it only for blocks of more than MR
     * rows, which take the micro-kernel for every micro-panel.
     *
     * <p>A's rows are {@code lda} apart from {@code aOff} in {@code a}: a block packed by
     * {@link Packing#packA} ({@code aOff = 0}, {@code lda = kc}, by depth or not), or rows of a
     * row-major A read in place.
     *
     * <p>A block with a {@link BlockOfB#bias()} (the first K block of a product with a bias) adds
     * it to each micro-panel's rows of C right after computing them, while they are in L1: C is
     * written once, instead of being filled with the bias beforehand and read back by the
     * micro-kernel. {@code chain + bias} and {@code bias + chain} are the same float, so the bits
     * are those of accumulating into bias rows.
     */
    static void run(float[] a, int aOff, int lda, BlockOfB block, int mc, int nb, int jFrom, int jTo,
                    float[] c, int cOff, int ldc, int depthRows) {
        int kc = block.kc();
        PackedMatrix half = block.half();
        boolean perPanel = mc <= MR && (half == null || mc <= SINGLE_ROW_LOOPS || half.format() == PackedMatrix.Format.BF16);
        float[] wide = half == null || perPanel ? null
                : GemmWorkspace.current().wide(kc * Math.min(nb, Kernels.roundUp(jTo - jFrom, NR)));
        for (int jb = jFrom; jb < jTo; jb += nb) {
            int jbEnd = Math.min(jTo, jb + nb);
            float[] b = block.data();
            int bBase = block.offset();
            if (half != null && !perPanel) {
                half.widen(block.offset() + jb * kc, wide, Kernels.roundUp(jbEnd - jb, NR) * kc);
                b = wide;
                bBase = -jb * kc;
            }
            int panels = (jbEnd - jb + NR - 1) / NR;
            int lastNr = jbEnd - jb - (panels - 1) * NR;
            for (int ir = 0; ir < mc; ir += MR) {
                int mr = Math.min(MR, mc - ir);
                int cAt = cOff + ir * ldc + jb;
                if (half == null || !perPanel) {
                    // float32 panels, or 16-bit ones widened above: one call sweeps the group's
                    // panels with the A micro-panel (by depth, or rows lda apart) in L1. At most
                    // SINGLE_ROW_LOOPS rows imply perPanel, so those panels are float32.
                    if (depthRows > 0 && (mr == depthRows || mr == Kernels.MICRO.depthTailRows())) {
                        Kernels.MICRO.depthBlocks(kc, a, aOff + ir * lda, mr, b, bBase + jb * kc, NR * kc, panels,
                                c, cAt, ldc, lastNr, block.accumulate());
                    } else if (mc <= SINGLE_ROW_LOOPS) {
                        Kernels.DECODE.floatProduct(kc, a, aOff + ir * lda, lda, b, bBase + jb * kc, NR * kc, panels,
                                c, cAt, ldc, mr, lastNr, block.accumulate());
                    } else {
                        Kernels.MICRO.blocks(kc, a, aOff + ir * lda, lda, b, bBase + jb * kc, NR * kc, panels,
                                c, cAt, ldc, mr, lastNr, block.accumulate());
                    }
                } else if (mc <= SINGLE_ROW_LOOPS) {
                    if (half.format() == PackedMatrix.Format.BF16) {
                        Kernels.DECODE.halfProduct(true, false, kc, a, aOff + ir * lda, lda, half.half(),
                                block.offset() + jb * kc, NR * kc, panels, c, cAt, ldc, mr, lastNr, block.accumulate());
                    } else {
                        Kernels.DECODE.f16WeightProduct(kc, a, aOff + ir * lda, lda, half.half(),
                                block.offset() + jb * kc, NR * kc, panels, c, cAt, ldc, mr, lastNr, block.accumulate());
                    }
                } else {
                    for (int jr = jb; jr < jbEnd; jr += NR) {
                        for (int i = 0; i < mr; i++) {
                            Kernels.MICRO.bf16Row(kc, a, aOff + (ir + i) * lda, half.half(), block.offset() + jr * kc,
                                    c, cAt + i * ldc + jr - jb, Math.min(NR, jbEnd - jr), block.accumulate());
                        }
                    }
                }
                if (block.bias() != null) {
                    // While the rows just stored are in L1.
                    for (int i = 0; i < mr; i++) {
                        Kernels.ROWS.add(c, cAt + i * ldc, jbEnd - jb, block.bias(), block.jc() + jb);
                    }
                }
            }
        }
    }
}
