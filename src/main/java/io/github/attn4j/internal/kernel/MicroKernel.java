package io.github.attn4j.internal.kernel;

/**
 * The register-blocked outer-product micro-kernel: {@code C[0:mr, 0:nr] = A[0:mr, 0:kc] *
 * B[0:kc, 0:nr]}, one {@code MR x NR} block of C kept in registers while the reduction runs.
 * {@link Kernels#MICRO} is the implementation chosen at startup ({@link VectorMicroKernel} or
 * {@link ScalarMicroKernel}); everything around it (packing, the BLIS loops, attention tiles) is
 * shared by both paths.
 *
 * <p>Operand layouts:
 * <ul>
 *   <li>A is row-major: element (i, p) is {@code a[aOff + i * lda + p]}; only rows {@code i < mr}
 *       are read. That covers activations read in place (softmax weights, the attention's query
 *       tiles), the GEMM's packed A micro-panels ({@link Packing#packA}, {@code lda = kc}) and
 *       a row-major A it reads in place ({@code lda} = its row stride);
 *       {@link #depthBlocks} reads a GEMM micro-panel packed by depth instead, and
 *       {@link #strideBlocks} an attention tile's rows, a constant stride apart.</li>
 *   <li>B is a packed panel: row p is the {@link #nr()} floats at {@code b[bOff + p * nr()]},
 *       zero padded past the last real column.</li>
 *   <li>C element (i, j) is {@code c[cOff + i * ldc + j]}; only the {@code mr x nr} corner is
 *       written.</li>
 * </ul>
 * Bounds are the caller's contract: the kernels sit below validated entry points.
 */
interface MicroKernel {
    /**
     * The row stride of A that {@link #strideBlocks} reads: the attention tiles' query rows and
     * softmax weights ({@link AttentionKernel#BK}).
     */
    int TILE_STRIDE = AttentionKernel.BK;

    /** Rows of the register block. */
    int mr();

    /** Columns of the register block, the width of a packed B panel. */
    int nr();

    /**
     * {@code C[0:mr, 0:nr] = A[0:mr, 0:kc] * B[0:kc, 0:nr]}, added to C's previous contents when
     * {@code accumulate} is set. Each element of C is reduced over p in increasing order.
     */
    void block(int kc, float[] a, int aOff, int lda, float[] b, int bOff,
               float[] c, int cOff, int ldc, int mr, int nr, boolean accumulate);

    /**
     * Rows of the A micro-panels that {@link #depthBlocks} reads packed by depth, or 0 when this
     * kernel reads A only row-major.
     */
    default int depthRows() {
        return 0;
    }

    /**
     * Rows of the last micro-panel of a block that {@link #depthBlocks} also reads packed by
     * depth, when exactly that many rows are left after the full {@link #depthRows()} ones, or 0.
     */
    default int depthTailRows() {
        return 0;
    }

    /**
     * {@link #blocks} for {@code rows} rows of A packed by depth, {@code rows} being
     * {@link #depthRows()} or {@link #depthTailRows()}: element (i, p) at
     * {@code a[aOff + p * rows + i]}, one run of memory and one index for the whole micro-panel
     * ({@link Packing#packA}). Same reduction order, so the same bits as {@link #blocks} on the
     * same values row-major.
     */
    default void depthBlocks(int kc, float[] a, int aOff, int rows, float[] b, int bOff, int bStride, int panels,
                             float[] c, int cOff, int ldc, int lastNr, boolean accumulate) {
        throw new UnsupportedOperationException("this micro-kernel reads A only row-major");
    }

    /**
     * Rows of the A blocks that {@link #strideBlocks} reads, or 0 when this kernel has no loop for
     * A rows a fixed stride apart.
     */
    default int strideRows() {
        return 0;
    }

    /**
     * {@link #blocks} for {@code mr = }{@link #strideRows()} rows of A {@link #TILE_STRIDE} apart:
     * element (i, p) at {@code a[aOff + i * TILE_STRIDE + p]}. Same reduction order, so the same
     * bits as {@link #blocks} with {@code lda = TILE_STRIDE}.
     */
    default void strideBlocks(int kc, float[] a, int aOff, float[] b, int bOff, int bStride, int panels,
                              float[] c, int cOff, int ldc, int lastNr, boolean accumulate) {
        throw new UnsupportedOperationException("this micro-kernel has no loop for A rows a fixed stride apart");
    }

    /**
     * {@link #block} over {@code panels} consecutive column panels of the same A rows: panel t
     * reads B at {@code bOff + t * bStride} and writes C columns {@code [t·nr(), t·nr() + nr())},
     * all {@link #nr()} wide but the last, which is {@code lastNr} wide. One call instead of
     * {@code panels}, so a kernel whose set-up is not free pays it once: this is what makes short
     * reductions (attention's head width) cheap.
     */
    default void blocks(int kc, float[] a, int aOff, int lda, float[] b, int bOff, int bStride, int panels,
                        float[] c, int cOff, int ldc, int mr, int lastNr, boolean accumulate) {
        for (int t = 0; t < panels; t++) {
            block(kc, a, aOff, lda, b, bOff + t * bStride, c, cOff + t * nr(), ldc, mr,
                    t == panels - 1 ? lastNr : nr(), accumulate);
        }
    }
}
