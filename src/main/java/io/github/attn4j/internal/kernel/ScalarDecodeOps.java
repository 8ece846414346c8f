package io.github.attn4j.internal.kernel;

/**
 * The decode loops in plain Java: one {@link HalfFloat} conversion or one multiplication per
 * element; the products decode each B element where the fused multiply-add reads it.
 */
final class ScalarDecodeOps implements DecodeOps {
    private static final int NR = Kernels.NR;

    @Override
    public void toHalf(boolean bf16, float[] src, int off, int n, short[] dst, int dOff) {
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = bf16 ? HalfFloat.toBf16(src[off + i]) : HalfFloat.toF16(src[off + i]);
        }
    }

    @Override
    public boolean anyHalfOverflow(boolean bf16, float[] src, int off, int n) {
        for (int i = off; i < off + n; i++) {
            if (bf16 ? HalfFloat.overflowsBf16(src[i]) : HalfFloat.overflowsF16(src[i])) {
                return true;
            }
        }
        return false;
    }

    @Override
    public float toInt8(float[] src, int off, int n, byte[] dst, int dOff) {
        float max = 0f;
        for (int i = off; i < off + n; i++) {
            max = Math.max(max, Math.abs(src[i]));     // NaN if one is NaN
        }
        float s = Int8Panels.scale(max);
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = s > 0f ? Int8Panels.quantize(src[off + i], s) : 0;
        }
        return s;
    }

    @Override
    public void halfRows(boolean bf16, short[] src, int off, float[] dst, int dOff, int rows) {
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < NR; j++) {
                short h = src[off + r * NR + Packing.halfSlot(j)];
                dst[dOff + r * NR + j] = bf16 ? HalfFloat.fromBf16(h) : HalfFloat.fromF16(h);
            }
        }
    }

    @Override
    public void int8Columns(byte[] src, int off, float[] scales, int sOff, float[] dst, int dOff, int rows) {
        for (int i = 0; i < rows * NR; i++) {
            dst[dOff + i] = src[off + i] * scales[sOff + i % NR];
        }
    }

    @Override
    public void int8Rows(byte[] src, int off, float[] scales, int sOff, int sStride, float[] dst, int dOff, int rows) {
        for (int r = 0; r < rows; r++) {
            float s = scales[sOff + r * sStride];
            for (int c = 0; c < NR; c++) {
                dst[dOff + r * NR + c] = src[off + r * NR + c] * s;
            }
        }
    }

    @Override
    public void floatProduct(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                             float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        for (int t = 0; t < panels; t++) {
            int nr = t == panels - 1 ? lastNr : NR;
            for (int i = 0; i < mr; i++) {
                for (int j = 0; j < nr; j++) {
                    float acc = 0f;
                    for (int p = 0; p < kc; p++) {
                        acc = Math.fma(a[aOff + i * lda + p], b[bOff + t * bStride + p * NR + j], acc);
                    }
                    add(c, cOff + i * ldc + t * NR + j, acc, accumulate);
                }
            }
        }
    }

    @Override
    public void halfProduct(boolean bf16, boolean finite, int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int panels,
                            float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        for (int t = 0; t < panels; t++) {
            int nr = t == panels - 1 ? lastNr : NR;
            for (int i = 0; i < mr; i++) {
                for (int j = 0; j < nr; j++) {
                    float acc = 0f;
                    for (int p = 0; p < kc; p++) {
                        short h = b[bOff + t * bStride + p * NR + Packing.halfSlot(j)];
                        acc = Math.fma(a[aOff + i * lda + p], bf16 ? HalfFloat.fromBf16(h) : HalfFloat.fromF16(h), acc);
                    }
                    add(c, cOff + i * ldc + t * NR + j, acc, accumulate);
                }
            }
        }
    }

    @Override
    public void int8Keys(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                         float[] scales, int sOff, int sPanel, int block, float[] c, int cOff, int ldc, int mr, int lastNr) {
        for (int t = 0; t < panels; t++) {
            int nr = t == panels - 1 ? lastNr : NR;
            for (int i = 0; i < mr; i++) {
                for (int j = 0; j < nr; j++) {
                    float total = 0f;
                    for (int p0 = 0; p0 < kc; p0 += block) {
                        float part = 0f;
                        for (int p = p0; p < Math.min(kc, p0 + block); p++) {
                            part = Math.fma(a[aOff + i * lda + p], b[bOff + t * bStride + p * NR + j], part);
                        }
                        total = Math.fma(part, scales[sOff + t * sPanel + p0 / block * NR + j], total);
                    }
                    c[cOff + i * ldc + t * NR + j] = total;
                }
            }
        }
    }

    @Override
    public void int8Values(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                           float[] scales, int sOff, int sRow, int block, float[] c, int cOff, int ldc, int mr) {
        for (int t = 0; t < panels; t++) {
            for (int i = 0; i < mr; i++) {
                for (int j = 0; j < NR; j++) {
                    float acc = 0f;
                    for (int p = 0; p < kc; p++) {
                        float x = b[bOff + t * bStride + p * NR + j] * scales[sOff + p * sRow + t * NR / block];
                        acc = Math.fma(a[aOff + i * lda + p], x, acc);
                    }
                    add(c, cOff + i * ldc + t * NR + j, acc, true);
                }
            }
        }
    }

    private static void add(float[] c, int at, float acc, boolean accumulate) {
        c[at] = accumulate ? c[at] + acc : acc;
    }
}
