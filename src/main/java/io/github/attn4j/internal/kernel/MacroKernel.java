package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.Kernels.MR;
import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * {@link Gemm}'s macro-kernel: the jr and ir loops over one packed block of A and a range of
 * columns of one packed block of B, and the choice of loop that computes each micro-tile (the
 * micro-kernel, over float32 panels or 16-bit ones widened a group at a time, or the decode
 * products, which read B where it is packed).
 */
final class MacroKernel {
    /**
     * Products of at most this many rows of A (a decode step's projections, one row per token
     * decoded at once) over float32 or BF16 panels take {@link DecodeOps#floatProduct} or
     * {@link DecodeOps#halfProduct}, which read B in place with only those rows (one or two rows
     * hold four panels in eight accumulators), instead of the micro-kernel, which computes six or
     * twelve rows for them and puts more instructions between two cache lines of B, and, for
     * BF16, instead of widening each group of panels first. F16 panels take
     * {@link DecodeOps#f16WeightProduct} too, whose rows share each widened chunk, for at most
     * {@link #F16_DECODE_ROWS} rows; more rows widen their group once.
     * Same bits on every path. SideBySide on the Intel core, both orders, E = 4096 (jmh/README.md,
     * "F16 weights through the processor's conversion"): 3 and 4 float32 rows 0.71x the time of
     * the micro-kernel, 3 and 4 BF16 rows 0.56 to 0.66x that of one 16-bit row loop per row;
     * F16 rows by the one-row loop (which widens them again for each row) 1.6 to 1.9x slower
     * than the group widened once at 3 and 4 rows, and 0.83 to 0.99x at 2; by chunk loops for
     * two rows 0.74 to 0.78x, for three and four rows 0.72 to 0.84x ("F16 rows per widened
     * chunk", session 41).
     */
    private static final int DECODE_ROWS = DecodeOps.PRODUCT_ROWS;
    /**
     * The same bound for F16 weights, {@link DecodeOps#f16WeightRows}: four rows where the
     * vector path's four-row chunk loop has its 32 vector registers, else two.
     */
    private static final int F16_DECODE_ROWS = Kernels.DECODE.f16WeightRows();

    private MacroKernel() {
    }

    /**
     * The ir and jr loops over one packed {@code mc x kc} block of A and columns
     * {@code [jFrom, jTo)} (jFrom a multiple of NR) of the packed B block, in groups of {@code nb}
     * columns: each A micro-panel stays in L1 while it sweeps the B micro-panels of a group, which
     * stay in L2 while every A micro-panel of the block sweeps them.
     *
     * <p>A block of at most {@link #DECODE_ROWS} rows ({@link #F16_DECODE_ROWS} for F16 panels)
     * goes to the decode products, which read B where it is packed and widen 16-bit values as they
     * load them. With more rows, 16-bit B panels are widened to float32 into this thread's buffer
     * a group at a time, exactly, so the bits are those of the float32 panels of the same values,
     * and every A micro-panel reuses the group (the widening is one pass against {@code mc}
     * multiply-adds per element).
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
        PackedMatrix.Format format = half == null ? PackedMatrix.Format.F32 : half.format();
        boolean decode = mc <= (format == PackedMatrix.Format.F16 ? F16_DECODE_ROWS : DECODE_ROWS);
        float[] wide = half == null || decode ? null
                : GemmWorkspace.current().wide(kc * Math.min(nb, Kernels.roundUp(jTo - jFrom, NR)));
        for (int jb = jFrom; jb < jTo; jb += nb) {
            int jbEnd = Math.min(jTo, jb + nb);
            float[] b = block.data();
            int bBase = block.offset();
            if (wide != null) {
                half.widen(block.offset() + jb * kc, wide, GemmWorkspace.WIDE_START, Kernels.roundUp(jbEnd - jb, NR) * kc);
                b = wide;
                bBase = GemmWorkspace.WIDE_START - jb * kc;
            }
            int panels = (jbEnd - jb + NR - 1) / NR;
            int lastNr = jbEnd - jb - (panels - 1) * NR;
            for (int ir = 0; ir < mc; ir += MR) {
                int mr = Math.min(MR, mc - ir);
                int cAt = cOff + ir * ldc + jb;
                if (decode) {
                    int bAt = block.offset() + jb * kc;
                    switch (format) {
                        case F32 -> Kernels.DECODE.floatProduct(kc, a, aOff, lda, b, bAt, NR * kc, panels,
                                c, cAt, ldc, mr, lastNr, block.accumulate());
                        case BF16 -> Kernels.DECODE.halfProduct(true, false, kc, a, aOff, lda, half.half(), bAt,
                                NR * kc, panels, c, cAt, ldc, mr, lastNr, block.accumulate());
                        case F16 -> Kernels.DECODE.f16WeightProduct(kc, a, aOff, lda, half.half(), bAt,
                                NR * kc, panels, c, cAt, ldc, mr, lastNr, block.accumulate());
                    }
                } else if (depthRows > 0 && (mr == depthRows || mr == Kernels.MICRO.depthTailRows())) {
                    // float32 panels, or 16-bit ones widened above: one call sweeps the group's
                    // panels with the A micro-panel (by depth, or rows lda apart) in L1.
                    Kernels.MICRO.depthBlocks(kc, a, aOff + ir * lda, mr, b, bBase + jb * kc, NR * kc, panels,
                            c, cAt, ldc, lastNr, block.accumulate());
                } else {
                    Kernels.MICRO.blocks(kc, a, aOff + ir * lda, lda, b, bBase + jb * kc, NR * kc, panels,
                            c, cAt, ldc, mr, lastNr, block.accumulate());
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
