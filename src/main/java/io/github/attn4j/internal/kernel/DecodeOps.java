package io.github.attn4j.internal.kernel;

/**
 * The loops that widen a narrow cache's stored keys and values to float32, one tile at a time.
 * {@link Kernels#DECODE} is the implementation chosen at startup ({@link VectorDecodeOps} or
 * {@link ScalarDecodeOps}). Each output element is one exactly specified operation on its stored
 * bits (integer moves, at most one float multiplication), so every path gives the same bits.
 *
 * <p>The INT8 loops work on rows of {@link Kernels#NR} elements, the width of a packed panel.
 */
interface DecodeOps {
    /** {@code dst[dOff + i] = } the F16 value of {@code src[off + i]} ({@link HalfFloat#fromF16}), for {@code i < n}. */
    void f16(short[] src, int off, float[] dst, int dOff, int n);

    /** {@code dst[dOff + i] = } the BF16 value of {@code src[off + i]} ({@link HalfFloat#fromBf16}), for {@code i < n}. */
    void bf16(short[] src, int off, float[] dst, int dOff, int n);

    /**
     * A scale per column: {@code dst[dOff + r * NR + c] = src[off + r * NR + c] * scales[sOff + c]}
     * for {@code r < rows}, {@code c < NR} (a key panel: one scale per key).
     */
    void int8Columns(byte[] src, int off, float[] scales, int sOff, float[] dst, int dOff, int rows);

    /**
     * A scale per row: {@code dst[dOff + r * NR + c] = src[off + r * NR + c] * scales[sOff + r * sStride]}
     * for {@code r < rows}, {@code c < NR} (a value panel: one scale per key).
     */
    void int8Rows(byte[] src, int off, float[] scales, int sOff, int sStride, float[] dst, int dOff, int rows);
}
