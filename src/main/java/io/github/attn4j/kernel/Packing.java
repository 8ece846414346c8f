package io.github.attn4j.kernel;

import java.util.Arrays;

/**
 * Packing of GEMM operand blocks into the contiguous, zero-padded panels that
 * {@link MicroKernel#block} streams through.
 *
 * <ul>
 *   <li>A block ({@code mc x kc}) becomes a dense row-major block: element (i, p) is at
 *       {@code i * kc + p}, so MR-row panel {@code q} starts at {@code q * MR * kc} and the
 *       micro-kernel reads it as rows with leading dimension {@code kc}. Rows past {@code mc} in
 *       the last panel are zero.</li>
 *   <li>B block ({@code kc x nc}) becomes NR-column panels. Panel {@code q} (columns
 *       {@code q*NR .. q*NR+NR-1}) starts at {@code q * NR * kc} and stores row {@code p} of the
 *       panel as NR consecutive floats: element (p, j) of the block is at
 *       {@code (j / NR) * NR * kc + p * NR + j % NR}. Columns past {@code nc} are zero.</li>
 * </ul>
 * The micro-kernel then reads A rows with leading dimension {@code kc} and B with row stride NR.
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
     * Packs rows {@code [i0, i0 + mc)} and columns {@code [p0, p0 + kc)} of {@code a} row-major
     * (leading dimension {@code kc}) at the start of {@code dst}, which must hold
     * {@code roundUp(mc, MR) * kc} floats; the rows that complete the last MR-row panel are zero.
     */
    static void packA(MatrixView a, int i0, int mc, int p0, int kc, float[] dst) {
        float[] src = a.data();
        int rs = a.rowStride();
        int cs = a.colStride();
        int from = a.offset() + i0 * rs + p0 * cs;
        if (cs == 1) {
            for (int i = 0; i < mc; i++) {
                System.arraycopy(src, from + i * rs, dst, i * kc, kc);
            }
        } else if (rs < cs) {
            stepByStep(src, from, rs, cs, mc, kc, dst, 0, 1, kc);
        } else {
            lineByLine(src, from, rs, cs, mc, kc, dst, 0, 1, kc);
        }
        Arrays.fill(dst, mc * kc, Kernels.roundUp(mc, MR) * kc, 0f);
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

    /*
     * The two copy orders of one block. In both, the block has `lines` lines of `depth` elements;
     * element (l, d) is read from src[from + l * lineStride + d * depthStride] and written to
     * dst[to + d * dstDepth + l * dstLine]. For A, lines are rows and depth runs along K
     * (dstDepth 1, dstLine kc); for B, lines are columns and depth runs along K (dstDepth NR,
     * dstLine 1).
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
