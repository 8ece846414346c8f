package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import static io.github.attn4j.internal.kernel.VectorMicroKernel.NR;

/**
 * The twelve-row register block of {@link VectorTallBlocks} over A rows a fixed
 * {@link MicroKernel#TILE_STRIDE} apart ({@link MicroKernel#strideBlocks}): the attention tiles'
 * query rows and softmax weights. With the stride a constant, C2 addresses the twelve values of a
 * step from one index with constant offsets, as in {@link VectorDepthBlocks}, instead of keeping
 * twelve row offsets (reloaded from the stack in the loop of {@link VectorTallBlocks#blocks}), and
 * the rows need no copy. On an Intel Xeon (Emerald Rapids), in a harness alternating the loops over
 * one attention tile (48 query rows, 256 keys, operands in L1 and L2), the score product at head
 * width 64 ran at 146 to 152 flop/ns against 113 to 119 with a variable stride and 134 to 139 on
 * the query packed by depth; the value product at 156 to 160 against 113 to 121 and 135 to 144
 * (jmh/README.md, "Attention products on rows a constant stride apart"). Each element of C is
 * the same chain of fused multiply-adds as in {@link VectorTallBlocks#blocks}, so the bits are
 * the same.
 */
final class VectorStrideBlocks {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int LDA = MicroKernel.TILE_STRIDE;

    private VectorStrideBlocks() {
    }

    static void blocks(int kc, float[] a, int aOff, float[] b, int bOff, int bStride, int panels,
                       float[] c, int cOff, int ldc, int lastNr, boolean accumulate) {
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
                int ai = aOff + p;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av;
                av = FloatVector.broadcast(S, a[ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, a[ai + 1 * LDA]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, a[ai + 2 * LDA]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, a[ai + 3 * LDA]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
                av = FloatVector.broadcast(S, a[ai + 4 * LDA]);
                c40 = av.fma(b0, c40);
                c41 = av.fma(b1, c41);
                av = FloatVector.broadcast(S, a[ai + 5 * LDA]);
                c50 = av.fma(b0, c50);
                c51 = av.fma(b1, c51);
                av = FloatVector.broadcast(S, a[ai + 6 * LDA]);
                c60 = av.fma(b0, c60);
                c61 = av.fma(b1, c61);
                av = FloatVector.broadcast(S, a[ai + 7 * LDA]);
                c70 = av.fma(b0, c70);
                c71 = av.fma(b1, c71);
                av = FloatVector.broadcast(S, a[ai + 8 * LDA]);
                c80 = av.fma(b0, c80);
                c81 = av.fma(b1, c81);
                av = FloatVector.broadcast(S, a[ai + 9 * LDA]);
                c90 = av.fma(b0, c90);
                c91 = av.fma(b1, c91);
                av = FloatVector.broadcast(S, a[ai + 10 * LDA]);
                c100 = av.fma(b0, c100);
                c101 = av.fma(b1, c101);
                av = FloatVector.broadcast(S, a[ai + 11 * LDA]);
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
                c70 = accumulate ? c70.add(FloatVector.fromArray(S, c, ct + 7 * ldc)) : c70;
                c71 = accumulate ? c71.add(FloatVector.fromArray(S, c, ct + 7 * ldc + L)) : c71;
                c70.intoArray(c, ct + 7 * ldc);
                c71.intoArray(c, ct + 7 * ldc + L);
                c80 = accumulate ? c80.add(FloatVector.fromArray(S, c, ct + 8 * ldc)) : c80;
                c81 = accumulate ? c81.add(FloatVector.fromArray(S, c, ct + 8 * ldc + L)) : c81;
                c80.intoArray(c, ct + 8 * ldc);
                c81.intoArray(c, ct + 8 * ldc + L);
                c90 = accumulate ? c90.add(FloatVector.fromArray(S, c, ct + 9 * ldc)) : c90;
                c91 = accumulate ? c91.add(FloatVector.fromArray(S, c, ct + 9 * ldc + L)) : c91;
                c90.intoArray(c, ct + 9 * ldc);
                c91.intoArray(c, ct + 9 * ldc + L);
                c100 = accumulate ? c100.add(FloatVector.fromArray(S, c, ct + 10 * ldc)) : c100;
                c101 = accumulate ? c101.add(FloatVector.fromArray(S, c, ct + 10 * ldc + L)) : c101;
                c100.intoArray(c, ct + 10 * ldc);
                c101.intoArray(c, ct + 10 * ldc + L);
                c110 = accumulate ? c110.add(FloatVector.fromArray(S, c, ct + 11 * ldc)) : c110;
                c111 = accumulate ? c111.add(FloatVector.fromArray(S, c, ct + 11 * ldc + L)) : c111;
                c110.intoArray(c, ct + 11 * ldc);
                c111.intoArray(c, ct + 11 * ldc + L);
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
                VectorMicroKernel.copyCorner(spill, 0, c, ct, ldc, VectorTallBlocks.ROWS, nr, accumulate);
            }
        }
    }
}
