package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * The micro-kernel in plain Java: a {@code 4 x 8} block of C accumulated in a per-thread array, for
 * JVMs without the Vector API (or with it forced off). C2's auto-vectorizer may still use SIMD
 * instructions for the inner loop over the eight columns; the result is the same either way,
 * because each element is one chain of fused multiply-adds in increasing p.
 */
final class ScalarMicroKernel implements MicroKernel {
    static final int MR = 4;
    static final int NR = 8;
    /**
     * Per thread, the block's accumulators. A local array indexed by loop variables is not
     * scalar-replaced by C2, so one per block made a forward at (2, 40, 64, 4) allocate about
     * 150 KB per call.
     */
    private static final ThreadLocal<float[]> ACCUMULATORS = ThreadLocal.withInitial(() -> new float[MR * NR]);

    @Override
    public int mr() {
        return MR;
    }

    @Override
    public int nr() {
        return NR;
    }

    @Override
    public void block(int kc, float[] a, int aOff, int lda, float[] b, int bOff,
                      float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        run(kc, a, aOff, lda, b, bOff, c, cOff, ldc, mr, nr, accumulate);
    }

    /** The block with element (i, p) of A at {@code a[aOff + i * lda + p]}. */
    private static void run(int kc, float[] a, int aOff, int lda, float[] b, int bOff,
                            float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate) {
        float[] acc = ACCUMULATORS.get();
        Arrays.fill(acc, 0f);
        for (int p = 0; p < kc; p++) {
            int bi = bOff + p * NR;
            for (int i = 0; i < mr; i++) {
                float ai = a[aOff + i * lda + p];
                for (int j = 0; j < NR; j++) {
                    acc[i * NR + j] = Math.fma(ai, b[bi + j], acc[i * NR + j]);
                }
            }
        }
        for (int i = 0; i < mr; i++) {
            int row = cOff + i * ldc;
            for (int j = 0; j < nr; j++) {
                c[row + j] = accumulate ? c[row + j] + acc[i * NR + j] : acc[i * NR + j];
            }
        }
    }
}
