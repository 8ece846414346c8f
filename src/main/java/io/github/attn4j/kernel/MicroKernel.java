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
 *       written, with masked stores on the column tail.</li>
 * </ul>
 * Bounds are the caller's contract: this class is package-private and sits below validated
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

        if (mr == MR && nr == NR) {
            storeRow(c, cOff, c00, c01, accumulate);
            storeRow(c, cOff + ldc, c10, c11, accumulate);
            storeRow(c, cOff + 2 * ldc, c20, c21, accumulate);
            storeRow(c, cOff + 3 * ldc, c30, c31, accumulate);
            storeRow(c, cOff + 4 * ldc, c40, c41, accumulate);
            storeRow(c, cOff + 5 * ldc, c50, c51, accumulate);
        } else {
            VectorMask<Float> m0 = S.indexInRange(0, nr);
            VectorMask<Float> m1 = S.indexInRange(L, nr);
            storeRowMasked(c, cOff, c00, c01, m0, m1, accumulate);
            if (mr > 1) storeRowMasked(c, cOff + ldc, c10, c11, m0, m1, accumulate);
            if (mr > 2) storeRowMasked(c, cOff + 2 * ldc, c20, c21, m0, m1, accumulate);
            if (mr > 3) storeRowMasked(c, cOff + 3 * ldc, c30, c31, m0, m1, accumulate);
            if (mr > 4) storeRowMasked(c, cOff + 4 * ldc, c40, c41, m0, m1, accumulate);
            if (mr > 5) storeRowMasked(c, cOff + 5 * ldc, c50, c51, m0, m1, accumulate);
        }
    }

    private static void storeRow(float[] c, int off, FloatVector v0, FloatVector v1, boolean accumulate) {
        if (accumulate) {
            v0 = v0.add(FloatVector.fromArray(S, c, off));
            v1 = v1.add(FloatVector.fromArray(S, c, off + L));
        }
        v0.intoArray(c, off);
        v1.intoArray(c, off + L);
    }

    private static void storeRowMasked(float[] c, int off, FloatVector v0, FloatVector v1,
                                       VectorMask<Float> m0, VectorMask<Float> m1, boolean accumulate) {
        if (accumulate) {
            v0 = v0.add(FloatVector.fromArray(S, c, off, m0));
            v1 = v1.add(FloatVector.fromArray(S, c, off + L, m1));
        }
        v0.intoArray(c, off, m0);
        v1.intoArray(c, off + L, m1);
    }
}
