package io.github.attn4j.internal.kernel;

/**
 * The softmax of one materialized score row (when the caller asks for the attention weights);
 * the online softmax of {@link AttentionTile} works on score tiles instead.
 *
 * <p>A row whose entries are all {@code -Infinity} becomes all zeros (not NaN): it is a query
 * with nothing to attend.
 */
final class Softmax {
    private Softmax() {
    }

    /**
     * In-place softmax of {@code x[off..off+n)} whose denominator also holds {@code e^sink}
     * ({@code -Infinity}: no sink), so with a sink the weights sum to less than 1. A row whose
     * entries are all {@code -Infinity} becomes zeros, sink or not.
     */
    static void normalize(float[] x, int off, int n, float sink) {
        float max = Kernels.ROWS.max(x, off, n);
        if (max == Float.NEGATIVE_INFINITY) {
            java.util.Arrays.fill(x, off, off + n, 0f);
            return;
        }
        float sum = Kernels.ROWS.expShiftSum(x, off, n, max);
        if (sink != Float.NEGATIVE_INFINITY) {
            sum += ExpFloat.exp(sink - max);
        }
        Kernels.ROWS.scale(x, off, n, 1f / sum);
    }
}
