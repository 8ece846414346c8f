package io.github.attn4j.internal.kernel;

/** The decode loops in plain Java: one {@link HalfFloat} conversion or one multiplication per element. */
final class ScalarDecodeOps implements DecodeOps {
    private static final int NR = Kernels.NR;

    @Override
    public void f16(short[] src, int off, float[] dst, int dOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = HalfFloat.fromF16(src[off + i]);
        }
    }

    @Override
    public void bf16(short[] src, int off, float[] dst, int dOff, int n) {
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = HalfFloat.fromBf16(src[off + i]);
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
}
