package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * Packing of GEMM operand blocks into the contiguous, zero-padded panels that
 * {@link MicroKernel#blocks} streams through.
 *
 * <ul>
 *   <li>A block ({@code mc x kc}) becomes one contiguous row-major block: element (i, p) is at
 *       {@code i * kc + p}, so the MR-row micro-panel {@code q} is the {@code MR * kc} floats from
 *       {@code q * MR * kc}, which the micro-kernel reads as row-major A with {@code lda = kc}.
 *       Nothing is padded: the micro-kernel does not read rows past {@code mc}.</li>
 *   <li>B block ({@code kc x nc}) becomes NR-column panels. Panel {@code q} (columns
 *       {@code q*NR .. q*NR+NR-1}) starts at {@code q * NR * kc} and stores row {@code p} of the
 *       panel as NR consecutive floats: element (p, j) of the block is at
 *       {@code (j / NR) * NR * kc + p * NR + j % NR}. Columns past {@code nc} are zero.</li>
 * </ul>
 * BF16 panels ({@link #packWeightRows}) and a cache's 16-bit panels ({@link HalfPanels}) hold
 * each row of NR columns in the order of {@link #halfSlot}; F16 weight panels in column order.
 * Each step p of the micro-kernel then reads element p of each of the MR rows of an A panel
 * (6 KiB apart at most, all in L1) and NR consecutive floats of B.
 *
 * <p>The copy loops read the source along its unit-stride direction when it has one, so a
 * transposed operand costs the same to pack as a plain one. Callers validate the ranges.
 */
final class Packing {
    private static final int NR = Kernels.NR;

    private Packing() {
    }

    /**
     * Where column {@code j} ({@code 0 <= j < NR}) of a row of a 16-bit (F16 or BF16) panel is
     * stored, relative to the row's start: column {@code j < NR / 2} at {@code 2j}, column
     * {@code NR / 2 + j} at {@code 2j + 1}. Read as NR / 2 little-endian 32-bit lanes, lane
     * {@code j} then holds column {@code j} in its low half and column {@code NR / 2 + j} in its
     * high half, so the vector paths load a row once and take its two vectors apart with shifts
     * and masks instead of two widening moves: a BF16 value is the upper half of its float32, so
     * a row becomes its two vectors with one shift and one mask instead of two widening moves and
     * two shifts (two operations on the FMA ports per NR values instead of four), and a finite
     * F16 row takes seven operations instead of eight ({@link VectorWiden}; jmh/README.md, "16-bit
     * panel rows in pairs").
     */
    static int halfSlot(int j) {
        int half = NR / 2;
        return j < half ? 2 * j : 2 * (j - half) + 1;
    }

    /** Depth steps per piece of {@link #packByDepth}: a 64-byte line of each of the rows read at a time. */
    private static final int DEPTH_PIECE = 16;

    /**
     * Packs rows {@code [i0, i0 + mc)} and columns {@code [p0, p0 + kc)} of {@code a} into the
     * first {@code mc * kc} floats of {@code dst}, row after row; with {@code depthRows > 0}, its
     * full groups of {@code depthRows} rows by depth instead, as {@link MicroKernel#depthBlocks}
     * reads them: group g's element (i, p) at {@code g * depthRows * kc + p * depthRows + i}. The
     * rows past the last full group follow by depth too when there are exactly {@code tailRows}
     * of them ({@code > 0}; element (i, p) of the tail at {@code p * tailRows + i}), row-major
     * otherwise, so every group starts where it starts row-major.
     */
    static void packA(MatrixView a, int i0, int mc, int p0, int kc, float[] dst, int depthRows, int tailRows) {
        int deep = depthRows > 0 ? mc / depthRows * depthRows : 0;
        for (int g = 0; g < deep; g += depthRows) {
            packByDepth(a, i0 + g, depthRows, p0, kc, dst, g * kc);
        }
        if (depthRows > 0 && tailRows > 0 && mc - deep == tailRows) {
            packByDepth(a, i0 + deep, tailRows, p0, kc, dst, deep * kc);
            return;
        }
        packRows(a, i0 + deep, mc - deep, p0, kc, dst, deep * kc);
    }

    /** {@code rows} rows of A by depth into {@code dst} from {@code to}: read a line per row, written in order. */
    private static void packByDepth(MatrixView a, int i0, int rows, int p0, int kc, float[] dst, int to) {
        float[] src = a.data();
        int rs = a.rowStride();
        int cs = a.colStride();
        int from = a.offset() + i0 * rs + p0 * cs;
        if (cs != 1) {
            stepByStep(src, from, rs, cs, rows, kc, dst, to, rows, 1);
            return;
        }
        for (int q0 = 0; q0 < kc; q0 += DEPTH_PIECE) {
            int steps = Math.min(DEPTH_PIECE, kc - q0);
            for (int i = 0; i < rows; i++) {
                int s = from + i * rs + q0;
                int d = to + q0 * rows + i;
                for (int q = 0; q < steps; q++) {
                    dst[d + q * rows] = src[s + q];
                }
            }
        }
    }

    /** {@code mc} rows of A row after row into {@code dst} from {@code to}. */
    private static void packRows(MatrixView a, int i0, int mc, int p0, int kc, float[] dst, int to) {
        float[] src = a.data();
        int rs = a.rowStride();
        int cs = a.colStride();
        int from = a.offset() + i0 * rs + p0 * cs;
        if (cs == 1) {
            for (int i = 0; i < mc; i++) {
                System.arraycopy(src, from + i * rs, dst, to + i * kc, kc);
            }
        } else if (cs < rs) {
            lineByLine(src, from, rs, cs, mc, kc, dst, to, 1, kc);
        } else {
            stepByStep(src, from, rs, cs, mc, kc, dst, to, 1, kc);
        }
    }

    /**
     * Gathers {@code rows} rows of {@code depth} floats, row r starting at
     * {@code src[rowOffsets[r]]}, into rows {@code dst[r * ldd ..]} ({@code ldd >= depth}), each
     * value multiplied by {@code scale}: the attention kernel's query tile, whose rows are
     * scattered over a head layout, in the row-major form {@link MicroKernel#blocks} and
     * {@link MicroKernel#strideBlocks} read (see {@code AttentionTile}).
     */
    static void gatherScaledRows(float[] src, int[] rowOffsets, int rows, int depth, float scale, float[] dst, int ldd) {
        // One pass per row on the kernels' row loops (C2 left a plain gather-and-multiply loop
        // scalar). A copy followed by one scaling pass over the tile, the same bits, took 1.7 to
        // 2.4 times as long (48 rows of 64 from L2: 610 against 256 to 360 ns; jmh/README.md,
        // "Values copied by runs of tokens").
        for (int r = 0; r < rows; r++) {
            Kernels.ROWS.scaleInto(src, rowOffsets[r], depth, scale, dst, r * ldd);
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
     * {@code format} and written to {@code floats} (F32) or {@code halves} (F16 in column
     * order, as float32; BF16 rows in the order of {@link #halfSlot}). Columns
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
            int to = dstOff + row / NR * NR * kc + (format == PackedMatrix.Format.BF16 ? halfSlot(row % NR) : row % NR);
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
     * dst[to + d * dstDepth + l * dstLine]. A panel's lines are its rows, written one after the
     * other (dstDepth 1, dstLine kc); a B panel's lines are its columns (dstDepth NR, dstLine 1);
     * depth runs along K in both.
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
