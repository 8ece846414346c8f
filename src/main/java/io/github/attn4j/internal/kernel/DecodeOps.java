package io.github.attn4j.internal.kernel;

/**
 * The loops that widen a narrow cache's stored keys and values to float32, one tile at a time,
 * and a decode step's products, which widen them inside the micro-kernel's loop instead (and,
 * for float32 panels, {@link #floatProduct}, which has only the step's rows); and the narrowing
 * of appended rows, to 16 bits ({@link #toHalf}) or INT8 blocks ({@link #toInt8}), whose bits
 * are those of the scalar definitions on every path.
 * {@link Kernels#DECODE} is the implementation chosen at startup ({@link VectorDecodeOps} or
 * {@link ScalarDecodeOps}). Each output element is one exactly specified operation on its stored
 * bits (integer moves, at most one float multiplication), so every path gives the same bits.
 * The INT8 key product applies its scales per block of partial sums instead ({@link #int8Keys}),
 * the same on every path.
 *
 * <p>The INT8 loops work on rows of {@link Kernels#NR} elements, the width of a packed panel.
 *
 * <p>The products ({@link #floatProduct}, {@link #halfProduct}, {@link #int8Keys},
 * {@link #int8Values}) are the micro-kernel's {@code C = A · B} over {@code panels} column panels
 * of B, float32 or narrow, for at most {@link #PRODUCT_ROWS} rows of a row-major A, as
 * {@link MicroKernel#blocks} reads it: element {@code (i, p)} at {@code a[aOff + i * lda + p]}, nothing read past row
 * {@code mr - 1}. Panel {@code t}'s B row {@code p} is NR stored values at
 * {@code b[bOff + t * bStride + p * NR]} (16-bit ones in the order of {@link Packing#halfSlot}),
 * widened as the loops above widen them, and C columns
 * {@code [t·NR, t·NR + NR)} receive it, all NR wide but the last, which is {@code lastNr} wide;
 * only the {@code mr} rows of C are written. Each element of C (but those of {@link #int8Keys})
 * is one chain of fused multiply-adds in increasing p from 0 over the decoded values, added to C
 * when {@code accumulate} is set, as in the micro-kernel: the same bits as the micro-kernel on a
 * decoded tile, without the tile.
 */
interface DecodeOps {
    /**
     * {@code rows} rows of a 16-bit panel, widened in column order: {@code dst[dOff + r * NR + j] = }
     * the BF16 ({@link HalfFloat#fromBf16}) or F16 ({@link HalfFloat#fromF16}) value of
     * {@code src[off + r * NR + Packing.halfSlot(j)]} for {@code r < rows}, {@code j < NR}.
     */
    void halfRows(boolean bf16, short[] src, int off, float[] dst, int dOff, int rows);

    /**
     * The inverse, for appending: {@code dst[dOff + i] = } {@link HalfFloat#toBf16} (or
     * {@link HalfFloat#toF16}) of {@code src[off + i]} for {@code i < n}, in column order.
     */
    void toHalf(boolean bf16, float[] src, int off, int n, short[] dst, int dOff);

    /**
     * Whether some {@code src[off + i]}, {@code i < n}, is finite and rounds to an infinity in
     * BF16 ({@link HalfFloat#overflowsBf16}) or F16 ({@link HalfFloat#overflowsF16}).
     */
    boolean anyHalfOverflow(boolean bf16, float[] src, int off, int n);

    /**
     * One INT8 block for appending ({@link Int8Panels}): returns its scale {@code s = max|x| / 127}
     * over {@code x = src[off, off + n)}, NaN when the block holds NaN or an infinity, and sets
     * {@code dst[dOff + i] = rint(x[i] / s)} clamped to [-127, 127], or 0 for every {@code i}
     * when {@code s} is 0 or NaN.
     */
    float toInt8(float[] src, int off, int n, byte[] dst, int dOff);

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

    /** Rows of A the products take: a decode step's query rows per key/value head under grouped-query attention. */
    int PRODUCT_ROWS = 4;

    /**
     * The product over float32 B panels: {@link MicroKernel#blocks} for at most
     * {@link #PRODUCT_ROWS} rows, without the micro-kernel's rows past them.
     */
    void floatProduct(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                      float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate);

    /**
     * The product over F16 (or, when {@code bf16}, BF16) B panels. When {@code finite} is set,
     * the caller knows the F16 panels hold no infinity or NaN, and an implementation may widen
     * them without their case (the same values for every finite bit pattern, subnormals
     * included); BF16 ignores it.
     */
    void halfProduct(boolean bf16, boolean finite, int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int panels,
                     float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate);

    /**
     * The most rows {@link MacroKernel} gives {@link #f16WeightProduct}; blocks of more rows widen
     * each group of panels once for the micro-kernel instead. This default (the scalar path):
     * {@link #PRODUCT_ROWS}.
     */
    default int f16WeightRows() {
        return PRODUCT_ROWS;
    }

    /**
     * The product over F16 weight panels, whose rows are in column order ({@link Gemm#packWeights};
     * B element {@code (p, j)} of panel {@code t} is {@code b[bOff + t * bStride + p * NR + j]}):
     * the bits of {@link #floatProduct} over the panels widened by
     * {@link HalfFloat#fromF16(short[], int, float[], int, int)}, for at most {@link #PRODUCT_ROWS}
     * rows. The widening, by the processor's conversion, goes through a scratch buffer of this
     * thread ({@link MacroKernel} gives it at most {@link #f16WeightRows} rows).
     *
     * <p>This default is the definition, a panel at a time: each panel widened whole, then
     * {@link #floatProduct} over it. {@link VectorDecodeOps} computes whole groups of panels its
     * own way and leaves the rest to it.
     */
    default void f16WeightProduct(int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int panels,
                                  float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        float[] wide = GemmWorkspace.current().wide(kc * Kernels.NR);
        for (int t = 0; t < panels; t++) {
            HalfFloat.fromF16(b, bOff + t * bStride, wide, 0, kc * Kernels.NR);
            floatProduct(kc, a, aOff, lda, wide, 0, kc * Kernels.NR, 1, c, cOff + t * Kernels.NR, ldc, mr,
                    t == panels - 1 ? lastNr : Kernels.NR, accumulate);
        }
    }

    /**
     * The product over INT8 key panels, each scale applied once per block: element {@code (i, j)}
     * of panel {@code t}'s C columns is {@code total}, where {@code total = 0} and, for each block
     * {@code k} of {@code block} depths in increasing order, {@code part} is the chain of fused
     * multiply-adds in increasing p from 0 of {@code a(i, p)} and the byte {@code (p, j)}, and
     * {@code total = fma(part, scales[sOff + t * sPanel + k * NR + j], total)}.
     */
    void int8Keys(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                  float[] scales, int sOff, int sPanel, int block, float[] c, int cOff, int ldc, int mr, int lastNr);

    /**
     * The product over INT8 value panels, added to C: B element {@code (p, j)} of panel {@code t}
     * is its byte times {@code scales[sOff + p * sRow + t * NR / block]} (one scale per key and
     * block of {@code block} columns); every panel is NR wide.
     */
    void int8Values(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int panels,
                    float[] scales, int sOff, int sRow, int block, float[] c, int cOff, int ldc, int mr);
}
