package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * Packing of GEMM operand blocks into the contiguous, zero-padded panels that
 * {@link MicroKernel#packedBlock} streams through.
 *
 * <ul>
 *   <li>A block ({@code mc x kc}) becomes MR-row panels. Panel {@code q} (rows
 *       {@code q*MR .. q*MR+MR-1}) starts at {@code q * MR * kc} and stores column {@code p} of
 *       the panel as MR consecutive floats: element (i, p) of the block is at
 *       {@code (i / MR) * MR * kc + p * MR + i % MR}. Rows past {@code mc} are zero.</li>
 *   <li>B block ({@code kc x nc}) becomes NR-column panels. Panel {@code q} (columns
 *       {@code q*NR .. q*NR+NR-1}) starts at {@code q * NR * kc} and stores row {@code p} of the
 *       panel as NR consecutive floats: element (p, j) of the block is at
 *       {@code (j / NR) * NR * kc + p * NR + j % NR}. Columns past {@code nc} are zero.</li>
 * </ul>
 * Each step p of the micro-kernel then reads MR consecutive floats of A and NR of B
 * ({@link MicroKernel#packedBlock}).
 *
 * <p>The copy loops read the source along its unit-stride direction when it has one, so a
 * transposed operand costs the same to pack as a plain one. Callers validate the ranges.
 */
final class Packing {
    private static final int MR = Kernels.MR;
    private static final int NR = Kernels.NR;

    private Packing() {
    }

    /**
     * Packs rows {@code [i0, i0 + mc)} and columns {@code [p0, p0 + kc)} of {@code a} into MR-row
     * panels at the start of {@code dst}, which must hold {@code roundUp(mc, MR) * kc} floats;
     * the rows that complete the last panel are zero.
     */
    static void packA(MatrixView a, int i0, int mc, int p0, int kc, float[] dst) {
        float[] src = a.data();
        int rs = a.rowStride();
        int cs = a.colStride();
        for (int ir = 0; ir < mc; ir += MR) {
            int mr = Math.min(MR, mc - ir);
            int from = a.offset() + (i0 + ir) * rs + p0 * cs;
            int to = ir * kc;
            if (mr < MR) {
                // Rows past mc are zero: clear the whole micro-panel once, then copy the valid rows.
                Arrays.fill(dst, to, to + kc * MR, 0f);
            }
            if (cs < rs) {
                lineByLine(src, from, rs, cs, mr, kc, dst, to, MR, 1);
            } else {
                stepByStep(src, from, rs, cs, mr, kc, dst, to, MR, 1);
            }
        }
    }

    /**
     * Packs {@code rows} rows of {@code depth} floats, row r starting at {@code src[rowOffsets[r]]},
     * into MR-row panels at the start of {@code dst} as {@link #packA} does, each value multiplied
     * by {@code scale}: the attention kernel's query tile, whose rows are gathered from a head
     * layout. The rows completing the last panel are left as they are: the packed micro-kernel
     * does not read them.
     */
    static void packScaledRows(float[] src, int[] rowOffsets, int rows, int depth, float scale, float[] dst) {
        for (int r = 0; r < rows; r++) {
            int from = rowOffsets[r];
            int to = r / MR * MR * depth + r % MR;
            for (int c = 0; c < depth; c++) {
                dst[to + c * MR] = src[from + c] * scale;
            }
        }
    }

    /**
     * Packs rows {@code [p0, p0 + kc)} and columns {@code [j0, j0 + nc)} of {@code b} into
     * NR-column panels starting at {@code dst[dstOff]}, which must have room for
     * {@code kc * roundUp(nc, NR)} floats.
     */
    static void packB(MatrixView b, int p0, int kc, int j0, int nc, float[] dst, int dstOff) {
        float[] src = b.data();
        int rs = b.rowStride();
        int cs = b.colStride();
        for (int jr = 0; jr < nc; jr += NR) {
            int nr = Math.min(NR, nc - jr);
            int from = b.offset() + p0 * rs + (j0 + jr) * cs;
            int to = dstOff + jr * kc;
            if (cs == 1 && nr == NR) {
                for (int p = 0; p < kc; p++) {
                    System.arraycopy(src, from + p * rs, dst, to + p * NR, NR);
                }
            } else if (rs < cs) {
                lineByLine(src, from, cs, rs, nr, kc, dst, to, NR, 1);
            } else {
                stepByStep(src, from, cs, rs, nr, kc, dst, to, NR, 1);
            }
            if (nr < NR) {
                for (int p = 0; p < kc; p++) {
                    Arrays.fill(dst, to + p * NR + nr, to + (p + 1) * NR, 0f);
                }
            }
        }
    }

    /**
     * Packs rows {@code [p0, p0 + kc)} of {@code B = wᵀ} (columns {@code [p0, p0 + kc)} of each row
     * of the {@code nn.Linear} weight {@code w}) into NR-column panels starting at index
     * {@code dstOff}, as {@link #packB} packs the transposed view: each element rounded to
     * {@code format} and written to {@code floats} (F32) or {@code halves} (F16, BF16). Columns
     * past {@code w.rows()} are not written (zero in a new array). {@code line} and
     * {@code scratch} hold at least {@code kc} elements: one run of a row is all of the weight
     * that is ever widened at a time.
     *
     * @throws IllegalArgumentException naming the weight, row and column of a finite value that
     *                                  would round to an infinity in {@code format}; panels
     *                                  written before it are left as they are
     */
    static void packWeightRows(WeightRows w, int p0, int kc, PackedMatrix.Format format, float[] floats,
                               short[] halves, int dstOff, float[] line, short[] scratch) {
        for (int row = 0; row < w.rows(); row++) {
            w.read(row, p0, kc, line, scratch);
            int to = dstOff + row / NR * NR * kc + row % NR;
            if (format == PackedMatrix.Format.F32) {
                for (int p = 0; p < kc; p++) {
                    floats[to + p * NR] = line[p];
                }
            } else {
                boolean bf16 = format == PackedMatrix.Format.BF16;
                for (int p = 0; p < kc; p++) {
                    float x = line[p];
                    if (bf16 ? HalfFloat.overflowsBf16(x) : HalfFloat.overflowsF16(x)) {
                        throw new IllegalArgumentException(w.name() + ": expected values " + format + " can hold ("
                                + (bf16 ? "finite |x| < 3.3961776e38, which rounds to at most 3.3895314e38"
                                : "finite |x| < 65520, which rounds to at most 65504; use BF16 or F32 weights")
                                + "), got " + x + " at row " + row + ", column " + (p0 + p));
                    }
                    halves[to + p * NR] = bf16 ? HalfFloat.toBf16(x) : HalfFloat.toF16(x);
                }
            }
        }
    }

    /*
     * The two copy orders of one block. In both, the block has `lines` lines of `depth` elements;
     * element (l, d) is read from src[from + l * lineStride + d * depthStride] and written to
     * dst[to + d * dstDepth + l * dstLine]. A panel's lines are its rows (dstDepth MR), a B
     * panel's lines its columns (dstDepth NR); depth runs along K and dstLine is 1 in both.
     */

    /** Line by line: reads each line of the source in order (best when depthStride is small). */
    private static void lineByLine(float[] src, int from, int lineStride, int depthStride,
                                  int lines, int depth, float[] dst, int to, int dstDepth, int dstLine) {
        for (int l = 0; l < lines; l++) {
            int s = from + l * lineStride;
            int d = to + l * dstLine;
            for (int p = 0; p < depth; p++) {
                dst[d] = src[s];
                s += depthStride;
                d += dstDepth;
            }
        }
    }

    /** Depth step by depth step: writes the panel in order (best when lineStride is small). */
    private static void stepByStep(float[] src, int from, int lineStride, int depthStride,
                                     int lines, int depth, float[] dst, int to, int dstDepth, int dstLine) {
        for (int p = 0; p < depth; p++) {
            int s = from + p * depthStride;
            int d = to + p * dstDepth;
            for (int l = 0; l < lines; l++) {
                dst[d + l * dstLine] = src[s + l * lineStride];
            }
        }
    }
}
