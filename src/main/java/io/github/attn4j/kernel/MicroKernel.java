package io.github.attn4j.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * The register-blocked outer-product micro-kernel: one {@code MR x NR} block of C held in
 * {@code MR * 2} vector accumulators (12 on every width), updated by broadcasting one element of
 * A per row and loading two vectors of B per step of the reduction.
 *
 * <p>Operand layouts are given by strides so that packed panels and plain row-major tiles run
 * through the same code:
 * <ul>
 *   <li>A element (i, p) is {@code a[aOff + i * aRowStride + p * aColStride]}; only rows
 *       {@code i < mr} are read.</li>
 *   <li>B row p is {@code b[bOff + p * bRowStride ...]} and must have {@code NR} readable floats
 *       even when {@code nr < NR} (packed panels are zero-padded; callers pad their buffers).
 *       Columns past {@code nr} only reach accumulator lanes that are never stored.</li>
 *   <li>C element (i, j) is {@code c[cOff + i * ldc + j]}; only the {@code mr x nr} corner is
 *       written. A full tile is stored straight from the registers; an edge tile is spilled to
 *       a small array and its corner copied with masked stores.</li>
 * </ul>
 * Packed panels ({@code aColStride == MR}, {@code bRowStride == NR}) take a copy of the loop whose
 * indices have constant scales, so C2 removes its bounds checks; other strides take the general
 * loop, which keeps them.
 *
 * <p>Bounds are the caller's contract: this class is package-private and sits below validated
 * entry points.
 */
final class MicroKernel {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;

    /** Rows of the register block. */
    static final int MR = 6;
    /** Columns of the register block: two vectors. */
    static final int NR = 2 * L;

    private MicroKernel() {
    }

    /**
     * {@code C[0:mr, 0:nr] = A[0:mr, 0:kc] * B[0:kc, 0:nr]}, added to C's previous contents when
     * {@code accumulate} is set.
     */
    static void block(int kc,
                      float[] a, int aOff, int aRowStride, int aColStride,
                      float[] b, int bOff, int bRowStride,
                      float[] c, int cOff, int ldc,
                      int mr, int nr, boolean accumulate) {
        // Rows past mr re-read the last valid row: their accumulators are computed but never stored.
        int r0 = aOff;
        int r1 = aOff + Math.min(1, mr - 1) * aRowStride;
        int r2 = aOff + Math.min(2, mr - 1) * aRowStride;
        int r3 = aOff + Math.min(3, mr - 1) * aRowStride;
        int r4 = aOff + Math.min(4, mr - 1) * aRowStride;
        int r5 = aOff + Math.min(5, mr - 1) * aRowStride;

        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        FloatVector c40 = FloatVector.zero(S), c41 = FloatVector.zero(S);
        FloatVector c50 = FloatVector.zero(S), c51 = FloatVector.zero(S);

        if (aColStride == MR && bRowStride == NR) {
            // Packed panels: indices affine in p with constant scales, so C2 drops the bounds checks.
            for (int p = 0; p < kc; p++) {
                int bi = bOff + p * NR;
                int ai = p * MR;
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av = FloatVector.broadcast(S, a[r0 + ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, a[r1 + ai]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, a[r2 + ai]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, a[r3 + ai]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
                av = FloatVector.broadcast(S, a[r4 + ai]);
                c40 = av.fma(b0, c40);
                c41 = av.fma(b1, c41);
                av = FloatVector.broadcast(S, a[r5 + ai]);
                c50 = av.fma(b0, c50);
                c51 = av.fma(b1, c51);
            }
        } else {
            int bi = bOff;
            int ai = 0;
            for (int p = 0; p < kc; p++) {
                FloatVector b0 = FloatVector.fromArray(S, b, bi);
                FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
                FloatVector av = FloatVector.broadcast(S, a[r0 + ai]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, a[r1 + ai]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, a[r2 + ai]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, a[r3 + ai]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
                av = FloatVector.broadcast(S, a[r4 + ai]);
                c40 = av.fma(b0, c40);
                c41 = av.fma(b1, c41);
                av = FloatVector.broadcast(S, a[r5 + ai]);
                c50 = av.fma(b0, c50);
                c51 = av.fma(b1, c51);
                bi += bRowStride;
                ai += aColStride;
            }
        }

        // The stores are written out here rather than in helpers taking vectors: once C2 stops
        // inlining such a helper (NodeCountInliningCutoff), it boxes the accumulators passed to it
        // and schedules the box allocations inside the loop above, a 3x slowdown.
        if (mr == MR && nr == NR) {
            int o0 = cOff;
            int o1 = o0 + ldc;
            int o2 = o1 + ldc;
            int o3 = o2 + ldc;
            int o4 = o3 + ldc;
            int o5 = o4 + ldc;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, o0));
                c01 = c01.add(FloatVector.fromArray(S, c, o0 + L));
                c10 = c10.add(FloatVector.fromArray(S, c, o1));
                c11 = c11.add(FloatVector.fromArray(S, c, o1 + L));
                c20 = c20.add(FloatVector.fromArray(S, c, o2));
                c21 = c21.add(FloatVector.fromArray(S, c, o2 + L));
                c30 = c30.add(FloatVector.fromArray(S, c, o3));
                c31 = c31.add(FloatVector.fromArray(S, c, o3 + L));
                c40 = c40.add(FloatVector.fromArray(S, c, o4));
                c41 = c41.add(FloatVector.fromArray(S, c, o4 + L));
                c50 = c50.add(FloatVector.fromArray(S, c, o5));
                c51 = c51.add(FloatVector.fromArray(S, c, o5 + L));
            }
            c00.intoArray(c, o0);
            c01.intoArray(c, o0 + L);
            c10.intoArray(c, o1);
            c11.intoArray(c, o1 + L);
            c20.intoArray(c, o2);
            c21.intoArray(c, o2 + L);
            c30.intoArray(c, o3);
            c31.intoArray(c, o3 + L);
            c40.intoArray(c, o4);
            c41.intoArray(c, o4 + L);
            c50.intoArray(c, o5);
            c51.intoArray(c, o5 + L);
        } else {
            // Edge tile: spill the whole register block, then copy its mr x nr corner.
            float[] tile = new float[MR * NR];
            c00.intoArray(tile, 0);
            c01.intoArray(tile, L);
            c10.intoArray(tile, NR);
            c11.intoArray(tile, NR + L);
            c20.intoArray(tile, 2 * NR);
            c21.intoArray(tile, 2 * NR + L);
            c30.intoArray(tile, 3 * NR);
            c31.intoArray(tile, 3 * NR + L);
            c40.intoArray(tile, 4 * NR);
            c41.intoArray(tile, 4 * NR + L);
            c50.intoArray(tile, 5 * NR);
            c51.intoArray(tile, 5 * NR + L);
            storeCorner(tile, c, cOff, ldc, mr, nr, accumulate);
        }
    }

    /**
     * Stores (or adds) the {@code mr x nr} corner of a spilled {@code MR x NR} tile into C with
     * masked stores, which touch no element of C past column {@code nr}.
     */
    private static void storeCorner(float[] tile, float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        VectorMask<Float> m0 = S.indexInRange(0, nr);
        VectorMask<Float> m1 = S.indexInRange(L, nr);
        for (int i = 0; i < mr; i++) {
            int o = cOff + i * ldc;
            FloatVector v0 = FloatVector.fromArray(S, tile, i * NR);
            FloatVector v1 = FloatVector.fromArray(S, tile, i * NR + L);
            if (accumulate) {
                v0 = v0.add(FloatVector.fromArray(S, c, o, m0));
                v1 = v1.add(FloatVector.fromArray(S, c, o + L, m1));
            }
            v0.intoArray(c, o, m0);
            v1.intoArray(c, o + L, m1);
        }
    }
}
