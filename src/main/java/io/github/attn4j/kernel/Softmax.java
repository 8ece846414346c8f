package io.github.attn4j.kernel;

/**
 * Row softmax kernels: the plain blocked softmax, the fused scale-mask-softmax over a score
 * tile, and the row primitives the tiled attention kernel builds its online softmax from.
 *
 * <p>A row whose entries are all {@code -Infinity} becomes all zeros (not NaN): it is a query
 * with nothing to attend.
 */
public final class Softmax {
    private Softmax() {
    }

    /**
     * In-place softmax of {@code rows} rows of {@code cols} floats, row {@code r} starting at
     * {@code x[offset + r * ld]}.
     *
     * @throws IllegalArgumentException if a dimension is negative, {@code ld < cols}, or the rows
     *                                  do not fit in {@code x}
     */
    public static void rows(float[] x, int offset, int rows, int cols, int ld) {
        Bounds.rows("x", x, offset, rows, cols, ld);
        for (int r = 0; r < rows; r++) {
            int off = offset + r * ld;
            normalizeRow(x, off, cols, Kernels.ROWS.max(x, off, cols));
        }
    }

    /**
     * In-place fused scale-mask-softmax of the score rows of one (batch, head): row {@code r} is
     * query {@code i0 + r}, at {@code x[offset + r * ld]}, over keys {@code 0..cols)}. Each score
     * is multiplied by {@code scale}, masked and biased by {@code mask}, then normalized.
     *
     * @throws IllegalArgumentException if the rows do not fit in {@code x}
     */
    public static void scaleMaskRows(float[] x, int offset, int rows, int cols, int ld,
                                     ScoreMask mask, int b, int h, int i0, float scale) {
        Bounds.rows("x", x, offset, rows, cols, ld);
        for (int r = 0; r < rows; r++) {
            int off = offset + r * ld;
            int n = mask.keyLimit(i0 + r, cols);
            float max = n == 0 ? Float.NEGATIVE_INFINITY : mask.scaleMaskMax(x, off, n, b, h, i0 + r, scale, 0);
            fill(x, off + n, cols - n, 0f);
            normalizeRow(x, off, n, max);
        }
    }

    private static void normalizeRow(float[] x, int off, int n, float max) {
        if (max == Float.NEGATIVE_INFINITY) {
            fill(x, off, n, 0f);
            return;
        }
        float sum = Kernels.ROWS.expShiftSum(x, off, n, max);
        Kernels.ROWS.scale(x, off, n, 1f / sum);
    }

    /** Sets {@code x[off..off+n)} to {@code value}. */
    static void fill(float[] x, int off, int n, float value) {
        java.util.Arrays.fill(x, off, off + n, value);
    }
}
