package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import static io.github.attn4j.internal.kernel.VectorMicroKernel.NR;

/**
 * The tall register block of {@link VectorMicroKernel}: 12 rows by two vectors, 24 accumulators,
 * for register files of 32 vectors (AVX-512). Each step of the reduction loads the same two
 * vectors of B as the six-row block and broadcasts twelve elements of A, so a B panel streamed
 * from L2 feeds twice the multiply-adds. {@link VectorMicroKernel#blocks} calls it for blocks of
 * more than six rows when {@link KernelSelection} chose twelve; rows past {@code mr} re-read the
 * last valid row and are not stored, as there.
 *
 * <p>Why: on a core with full-width 512-bit FMAs (AMD Zen 5), the six-row block ran the score
 * product of a 48 x 128 tile at head width 64 at 87% of the FMA ceiling and this one ran a
 * 96 x 128 tile (the same flops per row) at 95%, and {@code MultiHeadAttention.forward} took 10
 * to 18% less time (jmh/README.md, "Twelve-row register block"). On a core that splits each
 * 512-bit FMA in two (AMD Zen 4), an earlier twelve-row kernel measured 11 to 38% slower than six
 * rows, so {@link KernelSelection} keeps six rows there ({@code -Dattn4j.kernelRows} overrides).
 *
 * <p>Blocks of seven or eight rows take {@link #eightRows}, the same loop without rows 8 to 11:
 * a product of 128 rows ends in eight (10 x 12 + 8), one of 512 rows too (row blocks of MC =
 * 132: three of 11 x 12, then 9 x 12 + 8), and so does the last query tile of an attention head at
 * L = 128 or 512 (32 rows: 12 + 12 + 8); the twelve-row loop computed four rows there for
 * nothing. The GEMM of a 128-token fused projection (128 x 1536 x 512) then takes 2 to 4% less
 * time, a forward at L = 128 about 3% less, and an eight-row product 0.71x (jmh/README.md,
 * "Eight-row blocks"). A branch around rows 8 to 11 inside the twelve-row loop, or a second
 * loop beside it in the same method, made products of full twelve-row blocks 1.5 to 4.4%
 * slower; a method of its own leaves that loop as it was. A GEMM block packed by depth runs
 * its eight-row tail through {@link VectorDepthBlocks#eightRows} instead.
 *
 * <p>Written out like the six-row loop, and for the same reasons: constant strides in the
 * reduction loop, stores inline (a helper taking vectors boxes them when C2 does not inline it),
 * and the panel loop inside the one method.
 */
final class VectorTallBlocks {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;

    /** Rows of the tall register block. */
    static final int ROWS = 12;
    /** Rows of {@link #eightRows}, the loop for blocks of seven or eight rows. */
    static final int EIGHT_ROWS = 8;

    private VectorTallBlocks() {
    }

    /** {@link MicroKernel#blocks} for {@code 6 < mr <= 12}. */
    static void blocks(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                       float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        int r0 = aOff;
        int r1 = r0 + lda;
        int r2 = r1 + lda;
        int r3 = r2 + lda;
        int r4 = r3 + lda;
        int r5 = r4 + lda;
        int r6 = r5 + lda;
        int r7 = mr > 7 ? r6 + lda : r6;
        int r8 = mr > 8 ? r7 + lda : r7;
        int r9 = mr > 9 ? r8 + lda : r8;
        int r10 = mr > 10 ? r9 + lda : r9;
        int r11 = mr > 11 ? r10 + lda : r10;
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
            FloatVector c60 = FloatVector.zero(S), c61 = FloatVector.zero(S);
            FloatVector c70 = FloatVector.zero(S), c71 = FloatVector.zero(S);
            FloatVector c80 = FloatVector.zero(S), c81 = FloatVector.zero(S);
            FloatVector c90 = FloatVector.zero(S), c91 = FloatVector.zero(S);
            FloatVector c100 = FloatVector.zero(S), c101 = FloatVector.zero(S);
            FloatVector c110 = FloatVector.zero(S), c111 = FloatVector.zero(S);

            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av;
                av = FloatVector.broadcast(S, a[r0 + p]);
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
                av = FloatVector.broadcast(S, a[r6 + p]);
                c60 = av.fma(b0, c60);
                c61 = av.fma(b1, c61);
                av = FloatVector.broadcast(S, a[r7 + p]);
                c70 = av.fma(b0, c70);
                c71 = av.fma(b1, c71);
                av = FloatVector.broadcast(S, a[r8 + p]);
                c80 = av.fma(b0, c80);
                c81 = av.fma(b1, c81);
                av = FloatVector.broadcast(S, a[r9 + p]);
                c90 = av.fma(b0, c90);
                c91 = av.fma(b1, c91);
                av = FloatVector.broadcast(S, a[r10 + p]);
                c100 = av.fma(b0, c100);
                c101 = av.fma(b1, c101);
                av = FloatVector.broadcast(S, a[r11 + p]);
                c110 = av.fma(b0, c110);
                c111 = av.fma(b1, c111);
            }

            if (nr == NR) {
                c00 = accumulate ? c00.add(FloatVector.fromArray(S, c, ct)) : c00;
                c01 = accumulate ? c01.add(FloatVector.fromArray(S, c, ct + L)) : c01;
                c00.intoArray(c, ct);
                c01.intoArray(c, ct + L);
                c10 = accumulate ? c10.add(FloatVector.fromArray(S, c, ct + ldc)) : c10;
                c11 = accumulate ? c11.add(FloatVector.fromArray(S, c, ct + ldc + L)) : c11;
                c10.intoArray(c, ct + ldc);
                c11.intoArray(c, ct + ldc + L);
                c20 = accumulate ? c20.add(FloatVector.fromArray(S, c, ct + 2 * ldc)) : c20;
                c21 = accumulate ? c21.add(FloatVector.fromArray(S, c, ct + 2 * ldc + L)) : c21;
                c20.intoArray(c, ct + 2 * ldc);
                c21.intoArray(c, ct + 2 * ldc + L);
                c30 = accumulate ? c30.add(FloatVector.fromArray(S, c, ct + 3 * ldc)) : c30;
                c31 = accumulate ? c31.add(FloatVector.fromArray(S, c, ct + 3 * ldc + L)) : c31;
                c30.intoArray(c, ct + 3 * ldc);
                c31.intoArray(c, ct + 3 * ldc + L);
                c40 = accumulate ? c40.add(FloatVector.fromArray(S, c, ct + 4 * ldc)) : c40;
                c41 = accumulate ? c41.add(FloatVector.fromArray(S, c, ct + 4 * ldc + L)) : c41;
                c40.intoArray(c, ct + 4 * ldc);
                c41.intoArray(c, ct + 4 * ldc + L);
                c50 = accumulate ? c50.add(FloatVector.fromArray(S, c, ct + 5 * ldc)) : c50;
                c51 = accumulate ? c51.add(FloatVector.fromArray(S, c, ct + 5 * ldc + L)) : c51;
                c50.intoArray(c, ct + 5 * ldc);
                c51.intoArray(c, ct + 5 * ldc + L);
                c60 = accumulate ? c60.add(FloatVector.fromArray(S, c, ct + 6 * ldc)) : c60;
                c61 = accumulate ? c61.add(FloatVector.fromArray(S, c, ct + 6 * ldc + L)) : c61;
                c60.intoArray(c, ct + 6 * ldc);
                c61.intoArray(c, ct + 6 * ldc + L);
                if (mr > 7) {
                    c70 = accumulate ? c70.add(FloatVector.fromArray(S, c, ct + 7 * ldc)) : c70;
                    c71 = accumulate ? c71.add(FloatVector.fromArray(S, c, ct + 7 * ldc + L)) : c71;
                    c70.intoArray(c, ct + 7 * ldc);
                    c71.intoArray(c, ct + 7 * ldc + L);
                }
                if (mr > 8) {
                    c80 = accumulate ? c80.add(FloatVector.fromArray(S, c, ct + 8 * ldc)) : c80;
                    c81 = accumulate ? c81.add(FloatVector.fromArray(S, c, ct + 8 * ldc + L)) : c81;
                    c80.intoArray(c, ct + 8 * ldc);
                    c81.intoArray(c, ct + 8 * ldc + L);
                }
                if (mr > 9) {
                    c90 = accumulate ? c90.add(FloatVector.fromArray(S, c, ct + 9 * ldc)) : c90;
                    c91 = accumulate ? c91.add(FloatVector.fromArray(S, c, ct + 9 * ldc + L)) : c91;
                    c90.intoArray(c, ct + 9 * ldc);
                    c91.intoArray(c, ct + 9 * ldc + L);
                }
                if (mr > 10) {
                    c100 = accumulate ? c100.add(FloatVector.fromArray(S, c, ct + 10 * ldc)) : c100;
                    c101 = accumulate ? c101.add(FloatVector.fromArray(S, c, ct + 10 * ldc + L)) : c101;
                    c100.intoArray(c, ct + 10 * ldc);
                    c101.intoArray(c, ct + 10 * ldc + L);
                }
                if (mr > 11) {
                    c110 = accumulate ? c110.add(FloatVector.fromArray(S, c, ct + 11 * ldc)) : c110;
                    c111 = accumulate ? c111.add(FloatVector.fromArray(S, c, ct + 11 * ldc + L)) : c111;
                    c110.intoArray(c, ct + 11 * ldc);
                    c111.intoArray(c, ct + 11 * ldc + L);
                }
            } else {
                float[] spill = VectorMicroKernel.SPILL.get();
                c00.intoArray(spill, 0 * NR);
                c01.intoArray(spill, 0 * NR + L);
                c10.intoArray(spill, 1 * NR);
                c11.intoArray(spill, 1 * NR + L);
                c20.intoArray(spill, 2 * NR);
                c21.intoArray(spill, 2 * NR + L);
                c30.intoArray(spill, 3 * NR);
                c31.intoArray(spill, 3 * NR + L);
                c40.intoArray(spill, 4 * NR);
                c41.intoArray(spill, 4 * NR + L);
                c50.intoArray(spill, 5 * NR);
                c51.intoArray(spill, 5 * NR + L);
                c60.intoArray(spill, 6 * NR);
                c61.intoArray(spill, 6 * NR + L);
                c70.intoArray(spill, 7 * NR);
                c71.intoArray(spill, 7 * NR + L);
                c80.intoArray(spill, 8 * NR);
                c81.intoArray(spill, 8 * NR + L);
                c90.intoArray(spill, 9 * NR);
                c91.intoArray(spill, 9 * NR + L);
                c100.intoArray(spill, 10 * NR);
                c101.intoArray(spill, 10 * NR + L);
                c110.intoArray(spill, 11 * NR);
                c111.intoArray(spill, 11 * NR + L);
                VectorMicroKernel.copyCorner(spill, 0, c, ct, ldc, mr, nr, accumulate);
            }
        }
    }

    /**
     * {@link MicroKernel#blocks} for {@code 6 < mr <= 8}: the first eight rows of {@link #blocks},
     * 16 accumulators, so such a block no longer pays for twelve rows (see the class comment).
     */
    static void eightRows(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                          float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        int r0 = aOff;
        int r1 = r0 + lda;
        int r2 = r1 + lda;
        int r3 = r2 + lda;
        int r4 = r3 + lda;
        int r5 = r4 + lda;
        int r6 = r5 + lda;
        int r7 = mr > 7 ? r6 + lda : r6;
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
            FloatVector c60 = FloatVector.zero(S), c61 = FloatVector.zero(S);
            FloatVector c70 = FloatVector.zero(S), c71 = FloatVector.zero(S);

            for (int p = 0; p < kc; p++) {
                int bi = bt + p * NR;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av;
                av = FloatVector.broadcast(S, a[r0 + p]);
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
                av = FloatVector.broadcast(S, a[r6 + p]);
                c60 = av.fma(b0, c60);
                c61 = av.fma(b1, c61);
                av = FloatVector.broadcast(S, a[r7 + p]);
                c70 = av.fma(b0, c70);
                c71 = av.fma(b1, c71);
            }

            if (nr == NR) {
                c00 = accumulate ? c00.add(FloatVector.fromArray(S, c, ct)) : c00;
                c01 = accumulate ? c01.add(FloatVector.fromArray(S, c, ct + L)) : c01;
                c00.intoArray(c, ct);
                c01.intoArray(c, ct + L);
                c10 = accumulate ? c10.add(FloatVector.fromArray(S, c, ct + ldc)) : c10;
                c11 = accumulate ? c11.add(FloatVector.fromArray(S, c, ct + ldc + L)) : c11;
                c10.intoArray(c, ct + ldc);
                c11.intoArray(c, ct + ldc + L);
                c20 = accumulate ? c20.add(FloatVector.fromArray(S, c, ct + 2 * ldc)) : c20;
                c21 = accumulate ? c21.add(FloatVector.fromArray(S, c, ct + 2 * ldc + L)) : c21;
                c20.intoArray(c, ct + 2 * ldc);
                c21.intoArray(c, ct + 2 * ldc + L);
                c30 = accumulate ? c30.add(FloatVector.fromArray(S, c, ct + 3 * ldc)) : c30;
                c31 = accumulate ? c31.add(FloatVector.fromArray(S, c, ct + 3 * ldc + L)) : c31;
                c30.intoArray(c, ct + 3 * ldc);
                c31.intoArray(c, ct + 3 * ldc + L);
                c40 = accumulate ? c40.add(FloatVector.fromArray(S, c, ct + 4 * ldc)) : c40;
                c41 = accumulate ? c41.add(FloatVector.fromArray(S, c, ct + 4 * ldc + L)) : c41;
                c40.intoArray(c, ct + 4 * ldc);
                c41.intoArray(c, ct + 4 * ldc + L);
                c50 = accumulate ? c50.add(FloatVector.fromArray(S, c, ct + 5 * ldc)) : c50;
                c51 = accumulate ? c51.add(FloatVector.fromArray(S, c, ct + 5 * ldc + L)) : c51;
                c50.intoArray(c, ct + 5 * ldc);
                c51.intoArray(c, ct + 5 * ldc + L);
                c60 = accumulate ? c60.add(FloatVector.fromArray(S, c, ct + 6 * ldc)) : c60;
                c61 = accumulate ? c61.add(FloatVector.fromArray(S, c, ct + 6 * ldc + L)) : c61;
                c60.intoArray(c, ct + 6 * ldc);
                c61.intoArray(c, ct + 6 * ldc + L);
                if (mr > 7) {
                    c70 = accumulate ? c70.add(FloatVector.fromArray(S, c, ct + 7 * ldc)) : c70;
                    c71 = accumulate ? c71.add(FloatVector.fromArray(S, c, ct + 7 * ldc + L)) : c71;
                    c70.intoArray(c, ct + 7 * ldc);
                    c71.intoArray(c, ct + 7 * ldc + L);
                }
            } else {
                float[] spill = VectorMicroKernel.SPILL.get();
                c00.intoArray(spill, 0 * NR);
                c01.intoArray(spill, 0 * NR + L);
                c10.intoArray(spill, 1 * NR);
                c11.intoArray(spill, 1 * NR + L);
                c20.intoArray(spill, 2 * NR);
                c21.intoArray(spill, 2 * NR + L);
                c30.intoArray(spill, 3 * NR);
                c31.intoArray(spill, 3 * NR + L);
                c40.intoArray(spill, 4 * NR);
                c41.intoArray(spill, 4 * NR + L);
                c50.intoArray(spill, 5 * NR);
                c51.intoArray(spill, 5 * NR + L);
                c60.intoArray(spill, 6 * NR);
                c61.intoArray(spill, 6 * NR + L);
                c70.intoArray(spill, 7 * NR);
                c71.intoArray(spill, 7 * NR + L);
                VectorMicroKernel.copyCorner(spill, 0, c, ct, ldc, mr, nr, accumulate);
            }
        }
    }
}
