package io.github.attn4j.kernel;

import java.util.Arrays;

/**
 * Packing of GEMM operand blocks into the contiguous, zero-padded panels that
 * {@link MicroKernel#block} streams through.
 *
 * <ul>
 *   <li>A block ({@code mc x kc}) becomes MR-row panels. Panel {@code q} (rows
 *       {@code q*MR .. q*MR+MR-1} of the block) starts at {@code q * MR * kc} and stores column
 *       {@code p} of the panel as MR consecutive floats: element (i, p) of the block is at
 *       {@code (i / MR) * MR * kc + p * MR + i % MR}. Rows past {@code mc} in the last panel are
 *       zero.</li>
 *   <li>B block ({@code kc x nc}) becomes NR-column panels. Panel {@code q} (columns
 *       {@code q*NR .. q*NR+NR-1}) starts at {@code q * NR * kc} and stores row {@code p} of the
 *       panel as NR consecutive floats: element (p, j) of the block is at
 *       {@code (j / NR) * NR * kc + p * NR + j % NR}. Columns past {@code nc} are zero.</li>
 * </ul>
 * The micro-kernel then reads A with row stride 1 and column stride MR, and B with row stride NR.
 *
 * <p>The copy loops read the source along its unit-stride direction when it has one, so a
 * transposed operand costs the same to pack as a plain one. Callers validate the ranges.
 */
final class Packing {
    private static final int MR = MicroKernel.MR;
    private static final int NR = MicroKernel.NR;

    private Packing() {
    }

    /**
     * Packs rows {@code [i0, i0 + mc)} and columns {@code [p0, p0 + kc)} of {@code a} into MR-row
     * panels at the start of {@code dst}, which must hold {@code roundUp(mc, MR) * kc} floats.
     */
    static void packA(MatrixView a, int i0, int mc, int p0, int kc, float[] dst) {
        float[] src = a.data();
        int rs = a.rowStride();
        int cs = a.colStride();
        for (int ir = 0; ir < mc; ir += MR) {
            int mr = Math.min(MR, mc - ir);
            int from = a.offset() + (i0 + ir) * rs + p0 * cs;
            int to = ir * kc;
            if (mr == MR && cs == 1) {
                fullPanelOfRows(src, from, rs, kc, dst, to);
            } else if (mr == MR && rs == 1) {
                fullPanelOfColumns(src, from, cs, kc, dst, to);
            } else if (cs < rs) {
                lineByLine(src, from, rs, cs, mr, kc, dst, to, MR);
            } else {
                stepByStep(src, from, rs, cs, mr, kc, dst, to, MR);
            }
            if (mr < MR) {
                for (int p = 0; p < kc; p++) {
                    Arrays.fill(dst, to + p * MR + mr, to + (p + 1) * MR, 0f);
                }
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
                lineByLine(src, from, cs, rs, nr, kc, dst, to, NR);
            } else {
                stepByStep(src, from, cs, rs, nr, kc, dst, to, NR);
            }
            if (nr < NR) {
                for (int p = 0; p < kc; p++) {
                    Arrays.fill(dst, to + p * NR + nr, to + (p + 1) * NR, 0f);
                }
            }
        }
    }

    /**
     * A full MR-row panel of a row-major A (unit column stride): the six source rows are read in
     * order. All indices are affine in {@code p} with constant scales, so C2 removes the bounds
     * checks from the loop.
     */
    private static void fullPanelOfRows(float[] src, int from, int ld, int kc, float[] dst, int to) {
        int r0 = from;
        int r1 = r0 + ld;
        int r2 = r1 + ld;
        int r3 = r2 + ld;
        int r4 = r3 + ld;
        int r5 = r4 + ld;
        for (int p = 0; p < kc; p++) {
            int d = to + p * MR;
            dst[d] = src[r0 + p];
            dst[d + 1] = src[r1 + p];
            dst[d + 2] = src[r2 + p];
            dst[d + 3] = src[r3 + p];
            dst[d + 4] = src[r4 + p];
            dst[d + 5] = src[r5 + p];
        }
    }

    /**
     * A full MR-row panel of a column-major A (unit row stride, e.g. a transposed row-major
     * matrix): each step copies MR consecutive floats.
     */
    private static void fullPanelOfColumns(float[] src, int from, int ld, int kc, float[] dst, int to) {
        for (int p = 0; p < kc; p++) {
            int s = from + p * ld;
            int d = to + p * MR;
            dst[d] = src[s];
            dst[d + 1] = src[s + 1];
            dst[d + 2] = src[s + 2];
            dst[d + 3] = src[s + 3];
            dst[d + 4] = src[s + 4];
            dst[d + 5] = src[s + 5];
        }
    }

    /*
     * The two copy orders of one panel. In both, the panel has `lines` lines of `depth` elements;
     * element (l, d) is read from src[from + l * lineStride + d * depthStride] and written to
     * dst[to + d * width + l]. For A, lines are rows and depth runs along K; for B, lines are
     * columns and depth runs along K.
     */

    /** Line by line: reads each line of the source in order (best when depthStride is small). */
    private static void lineByLine(float[] src, int from, int lineStride, int depthStride,
                                  int lines, int depth, float[] dst, int to, int width) {
        for (int l = 0; l < lines; l++) {
            int s = from + l * lineStride;
            int d = to + l;
            for (int p = 0; p < depth; p++) {
                dst[d] = src[s];
                s += depthStride;
                d += width;
            }
        }
    }

    /** Depth step by depth step: writes the panel in order (best when lineStride is small). */
    private static void stepByStep(float[] src, int from, int lineStride, int depthStride,
                                     int lines, int depth, float[] dst, int to, int width) {
        for (int p = 0; p < depth; p++) {
            int s = from + p * depthStride;
            int d = to + p * width;
            for (int l = 0; l < lines; l++) {
                dst[d + l] = src[s + l * lineStride];
            }
        }
    }
}
