package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The Vector API micro-kernel: a {@code 6 x 2V} block of C (V = {@link Vectors#LANES}) held in
 * 12 vector accumulators, updated by broadcasting one element of A per row and loading two
 * vectors of B per step of the reduction, or, when {@link KernelSelection} chose twelve rows (on
 * the 512-bit path), a {@code 12 x 2V} block in 24 accumulators for blocks of more than six rows
 * ({@link VectorTallBlocks}). {@link #blocks} reads A as rows (attention scores and weights times
 * values, and the GEMM's packed A micro-panels, which are row-major too); on the twelve-row block,
 * {@link #depthBlocks} reads GEMM micro-panels packed by depth ({@link VectorDepthBlocks}) and
 * {@link #strideBlocks} full attention blocks, whose rows are a constant stride apart
 * ({@link VectorStrideBlocks}).
 *
 * <p>All strides in the reduction loop are constants or the loop index, so C2 hoists every range
 * check out of the loop (a variable stride there halved the throughput). In {@link #blocks}, rows
 * past {@code mr} re-read the last valid row; columns past {@code nr} only reach lanes that are
 * never stored.
 *
 * <p>One loop for row-major A, not a second one over A packed column by column (six consecutive
 * floats per step): on the 256-bit path (16 vector registers) C2 kept one of that loop's twelve
 * accumulators on the stack, a store and a reload in every step, and the GEMM ran at 42% of the
 * FMA ceiling; through {@link #blocks} the disassembled loop holds all twelve accumulators, the
 * two B vectors and two broadcasts in the 16 registers. GemmBenchmark, one thread, 256-bit path,
 * the two jars alternated twice: 512³ 6.75 and 7.45 → 3.99 and 4.86 ms, the L = 512 projection
 * 20.8 and 21.5 → 11.1 and 14.1 ms (jmh/README.md, "GEMM tuning").
 *
 * <p>Six rows on the narrower paths: 16 vector registers (AVX2) hold twelve accumulators, not
 * 24. Twelve rows on the 512-bit path by default since they were measured faster on a core with
 * full-width 512-bit FMAs (AMD Zen 5; {@link VectorTallBlocks}). On a core that runs each 512-bit
 * FMA as two halves (AMD Zen 4) an earlier twelve-row kernel was 11 to 38% slower in the GEMM
 * and 4 to 27% slower in the attention (GemmBenchmark and ScaledDotProductAttentionBenchmark, two
 * pairs of runs), so {@link KernelSelection} keeps six rows there; {@code -Dattn4j.kernelRows}
 * overrides.
 */
final class VectorMicroKernel implements MicroKernel {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;

    /** Rows of the short register block, and the most a block of the tall kernel leaves to it. */
    static final int SHORT_ROWS = 6;
    /** Columns of the register block: two vectors. */
    static final int NR = 2 * L;

    /**
     * Per thread, the row-by-row copy of a register block whose panel is narrower than NR (the
     * edges of a product), written out with full-width stores before its corner goes to C: one
     * buffer per thread instead of one array per partial block.
     */
    static final ThreadLocal<float[]> SPILL =
            ThreadLocal.withInitial(() -> new float[VectorTallBlocks.ROWS * NR]);

    /** Rows of the register block: {@link #SHORT_ROWS} or {@link VectorTallBlocks#ROWS}. */
    private final int rows;

    /**
     * @param rows rows of the register block, {@link #SHORT_ROWS} or {@link VectorTallBlocks#ROWS}
     */
    VectorMicroKernel(int rows) {
        if (rows != SHORT_ROWS && rows != VectorTallBlocks.ROWS) {
            throw new IllegalArgumentException("rows: expected " + SHORT_ROWS + " or " + VectorTallBlocks.ROWS
                    + ", got " + rows);
        }
        this.rows = rows;
    }

    @Override
    public int mr() {
        return rows;
    }

    @Override
    public int nr() {
        return NR;
    }

    @Override
    public int depthRows() {
        return rows == VectorTallBlocks.ROWS ? VectorTallBlocks.ROWS : 0;
    }

    @Override
    public int depthTailRows() {
        return rows == VectorTallBlocks.ROWS ? VectorTallBlocks.EIGHT_ROWS : 0;
    }

    @Override
    public int strideRows() {
        return depthRows();
    }

    @Override
    public void strideBlocks(int kc, float[] a, int aOff, float[] b, int bOff, int bStride, int panels,
                             float[] c, int cOff, int ldc, int lastNr, boolean accumulate) {
        if (rows != VectorTallBlocks.ROWS) {
            throw new UnsupportedOperationException("A rows a fixed stride apart need the twelve-row block, this one has " + rows);
        }
        VectorStrideBlocks.blocks(kc, a, aOff, b, bOff, bStride, panels, c, cOff, ldc, lastNr, accumulate);
    }

    @Override
    public void depthBlocks(int kc, float[] a, int aOff, int panelRows, float[] b, int bOff, int bStride, int panels,
                            float[] c, int cOff, int ldc, int lastNr, boolean accumulate) {
        if (rows != VectorTallBlocks.ROWS) {
            throw new UnsupportedOperationException("A packed by depth needs the twelve-row block, this one has " + rows);
        }
        if (panelRows == VectorTallBlocks.ROWS) {
            VectorDepthBlocks.blocks(kc, a, aOff, b, bOff, bStride, panels, c, cOff, ldc, lastNr, accumulate);
        } else if (panelRows == VectorTallBlocks.EIGHT_ROWS) {
            VectorDepthBlocks.eightRows(kc, a, aOff, b, bOff, bStride, panels, c, cOff, ldc, lastNr, accumulate);
        } else {
            throw new UnsupportedOperationException("A packed by depth in panels of " + panelRows
                    + " rows: expected " + VectorTallBlocks.ROWS + " or " + VectorTallBlocks.EIGHT_ROWS);
        }
    }

    @Override
    public void block(int kc, float[] a, int aOff, int lda, float[] b, int bOff,
                      float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        blocks(kc, a, aOff, lda, b, bOff, 0, 1, c, cOff, ldc, mr, nr, accumulate);
    }

    /** Writes the {@code mr x nr} corner of a register block spilled row by row (NR apart) from {@code spill[at]} into C. */
    static void copyCorner(float[] spill, int at, float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        for (int i = 0; i < mr; i++) {
            int row = cOff + i * ldc;
            int from = at + i * NR;
            for (int j = 0; j < nr; j++) {
                c[row + j] = accumulate ? c[row + j] + spill[from + j] : spill[from + j];
            }
        }
    }

    /**
     * One method for all panels, so the row set-up and C2's range-check predicates are paid once
     * per call. Blocks of up to six rows (a decode step's rows, the last block of a product) run
     * the six-row loop whatever the register block, and blocks of seven or eight rows the tall
     * block's eight-row loop, so they do not pay for twelve rows.
     */
    @Override
    public void blocks(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                       float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        if (mr > SHORT_ROWS && mr <= VectorTallBlocks.EIGHT_ROWS) {
            VectorTallBlocks.eightRows(kc, a, aOff, lda, b, bOff, bStride, panels, c, cOff, ldc, mr, lastNr, accumulate);
            return;
        }
        if (mr > SHORT_ROWS) {
            VectorTallBlocks.blocks(kc, a, aOff, lda, b, bOff, bStride, panels, c, cOff, ldc, mr, lastNr, accumulate);
            return;
        }
        // Rows past mr re-read the last valid row: their accumulators are computed but never stored.
        int r0 = aOff;
        int r1 = mr > 1 ? r0 + lda : r0;
        int r2 = mr > 2 ? r1 + lda : r1;
        int r3 = mr > 3 ? r2 + lda : r2;
        int r4 = mr > 4 ? r3 + lda : r3;
        int r5 = mr > 5 ? r4 + lda : r4;
        // The panel loop is written out in this one method, not around a helper: C2 does not
        // inline a method this large, and a call per panel would pay the set-up again.
        for (int t = 0; t < panels; t++) {
            int bt = bOff + t * bStride;
            int ct = cOff + t * NR;
            int nr = t == panels - 1 ? lastNr : NR;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            FloatVector c40 = FloatVector.zero(S), c41 = FloatVector.zero(S);
            FloatVector c50 = FloatVector.zero(S), c51 = FloatVector.zero(S);

            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, a[r1 + p]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, a[r2 + p]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, a[r3 + p]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
                av = FloatVector.broadcast(S, a[r4 + p]);
                c40 = av.fma(b0, c40);
                c41 = av.fma(b1, c41);
                av = FloatVector.broadcast(S, a[r5 + p]);
                c50 = av.fma(b0, c50);
                c51 = av.fma(b1, c51);
            }

            // Stores are written out here, not in helpers taking vectors: a helper that C2 declines to
            // inline boxes all twelve accumulators on every call. Rows past mr are not stored.
            if (nr == NR) {
                c00 = accumulate ? c00.add(FloatVector.fromArray(S, c, ct)) : c00;
                c01 = accumulate ? c01.add(FloatVector.fromArray(S, c, ct + L)) : c01;
                c00.intoArray(c, ct);
                c01.intoArray(c, ct + L);
                if (mr > 1) {
                    c10 = accumulate ? c10.add(FloatVector.fromArray(S, c, ct + ldc)) : c10;
                    c11 = accumulate ? c11.add(FloatVector.fromArray(S, c, ct + ldc + L)) : c11;
                    c10.intoArray(c, ct + ldc);
                    c11.intoArray(c, ct + ldc + L);
                }
                if (mr > 2) {
                    c20 = accumulate ? c20.add(FloatVector.fromArray(S, c, ct + 2 * ldc)) : c20;
                    c21 = accumulate ? c21.add(FloatVector.fromArray(S, c, ct + 2 * ldc + L)) : c21;
                    c20.intoArray(c, ct + 2 * ldc);
                    c21.intoArray(c, ct + 2 * ldc + L);
                }
                if (mr > 3) {
                    c30 = accumulate ? c30.add(FloatVector.fromArray(S, c, ct + 3 * ldc)) : c30;
                    c31 = accumulate ? c31.add(FloatVector.fromArray(S, c, ct + 3 * ldc + L)) : c31;
                    c30.intoArray(c, ct + 3 * ldc);
                    c31.intoArray(c, ct + 3 * ldc + L);
                }
                if (mr > 4) {
                    c40 = accumulate ? c40.add(FloatVector.fromArray(S, c, ct + 4 * ldc)) : c40;
                    c41 = accumulate ? c41.add(FloatVector.fromArray(S, c, ct + 4 * ldc + L)) : c41;
                    c40.intoArray(c, ct + 4 * ldc);
                    c41.intoArray(c, ct + 4 * ldc + L);
                }
                if (mr > 5) {
                    c50 = accumulate ? c50.add(FloatVector.fromArray(S, c, ct + 5 * ldc)) : c50;
                    c51 = accumulate ? c51.add(FloatVector.fromArray(S, c, ct + 5 * ldc + L)) : c51;
                    c50.intoArray(c, ct + 5 * ldc);
                    c51.intoArray(c, ct + 5 * ldc + L);
                }
            } else {
                // Partial panel: spill the register block to a scratch array with full-width stores
                // (masked stores near the end of c fall back to code that boxes every accumulator),
                // then copy its mr x nr corner.
                float[] spill = SPILL.get();
                c00.intoArray(spill, 0);
                c01.intoArray(spill, L);
                c10.intoArray(spill, NR);
                c11.intoArray(spill, NR + L);
                c20.intoArray(spill, 2 * NR);
                c21.intoArray(spill, 2 * NR + L);
                c30.intoArray(spill, 3 * NR);
                c31.intoArray(spill, 3 * NR + L);
                c40.intoArray(spill, 4 * NR);
                c41.intoArray(spill, 4 * NR + L);
                c50.intoArray(spill, 5 * NR);
                c51.intoArray(spill, 5 * NR + L);
                copyCorner(spill, 0, c, ct, ldc, mr, nr, accumulate);
            }
        }
    }
}
