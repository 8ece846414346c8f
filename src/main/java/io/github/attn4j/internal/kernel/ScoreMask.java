package io.github.attn4j.internal.kernel;

import java.util.List;

/**
 * A mask in the form the kernels consume: for each query row a key range {@code [start, end)},
 * computed ALiBi biases, and rows of keep flags and additive biases read straight from the
 * caller's arrays with broadcast strides.
 *
 * <p><b>Positions.</b> Query {@code t} of batch row {@code b} sits at position
 * {@code i' = origin[b] + t} (end alignment: {@code Lk - Lq} for plain attention, the row's
 * cached length before the call for a cache). Only its first {@code queries[b]} queries are
 * real; the rest (rows of a ragged batch that took fewer tokens) attend nothing. The per-row
 * arrays hold one entry per batch row, or a single entry for all of them (a batch that is not
 * ragged), so a plain call's mask does not grow with the batch.
 *
 * <p><b>Key range.</b> A causal limit keeps keys {@code j <= t + causalShift[b]}; a sliding
 * window keeps {@code |i' - j| < window}. Everything outside {@code [start, end)} is masked, so
 * the kernels skip whole key tiles outside every row's range and never compute them.
 *
 * <p><b>Sources.</b> For scores of batch {@code b}, head {@code h}, query {@code t}, the key
 * range {@code [0, Lk)} of every {@linkplain RowSource source} starts at
 * {@code offset + b * batchStride + h * headStride + t * rowStride} and is contiguous, so a
 * stride of 0 broadcasts that dimension.
 *
 * <p><b>Chunks.</b> A kernel call over some of the batch rows reads the whole call's mask at its
 * own rows ({@code AttentionKernel.forward}'s {@code firstBatch}).
 */
public final class ScoreMask {
    /** A row source: see the class comment for how a row is located. */
    public record RowSource(float[] data, int offset, int batchStride, int headStride, int rowStride) {
        int rowStart(int b, int h, int i) {
            return offset + b * batchStride + h * headStride + i * rowStride;
        }
    }

    private final int[] origin;
    private final int[] queries;
    private final int[] causalShift;
    private final int window;
    private final float[] alibi;
    private final RowSource[] keep;
    private final RowSource[] bias;
    private final int rows;

    /**
     * @param rows        number of batch rows
     * @param origin      per batch row (or one for all), the position of query 0
     * @param queries     per batch row (or one for all), the number of real queries
     * @param causalShift per batch row (or one for all), query t attends keys
     *                    {@code j <= t + causalShift[b]}; null when not causal
     * @param window      sliding window ({@code |i' - j| < window}), 0 for none
     * @param alibi       ALiBi slope per query head (null for none): adds {@code -slope · |i' - j|}
     * @param keep        sources whose 0 entries mask a key (nonzero keeps it)
     * @param bias        sources added to the scaled scores
     */
    public ScoreMask(int rows, int[] origin, int[] queries, int[] causalShift, int window, float[] alibi,
                     List<RowSource> keep, List<RowSource> bias) {
        if (!perRow(origin, rows) || !perRow(queries, rows) || causalShift != null && !perRow(causalShift, rows)) {
            throw new IllegalArgumentException("origin, queries and causalShift: expected 1 or " + rows
                    + " entries, got " + origin.length + ", " + queries.length + " and "
                    + (causalShift == null ? "none" : String.valueOf(causalShift.length)));
        }
        this.origin = origin;
        this.queries = queries;
        this.causalShift = causalShift;
        this.window = window;
        this.alibi = alibi;
        this.keep = keep.toArray(RowSource[]::new);
        this.bias = bias.toArray(RowSource[]::new);
        this.rows = rows;
    }

    private static boolean perRow(int[] values, int rows) {
        return values.length == 1 || values.length == rows;
    }

    /** Entry {@code b} of a per-row array, or its single entry. */
    private static int of(int[] values, int b) {
        return values[values.length == 1 ? 0 : b];
    }

    /** Number of batch rows. */
    int rows() {
        return rows;
    }

    /** First key query {@code t} of row {@code b} may attend (the range is empty when it is not below {@link #keyEnd}). */
    int keyStart(int b, int t) {
        return window == 0 ? 0 : (int) Math.max(0, (long) of(origin, b) + t - window + 1);
    }

    /** One past the last key query {@code t} of row {@code b} may attend, in {@code [0, keys]}. */
    int keyEnd(int b, int t, int keys) {
        if (t >= of(queries, b)) {
            return 0;
        }
        long end = keys;
        if (causalShift != null) {
            end = Math.min(end, (long) t + of(causalShift, b) + 1);
        }
        if (window != 0) {
            end = Math.min(end, (long) of(origin, b) + t + window);
        }
        return (int) Math.max(0, end);
    }

    /**
     * Whether every key in {@code [j0, j1)} is masked for every query of batch {@code b}, head
     * {@code h}, judged from query-independent keep rows (key padding). Used to skip whole tiles.
     */
    boolean masksAllKeys(int b, int h, int j0, int j1) {
        for (RowSource src : keep) {
            if (src.rowStride() != 0) {
                continue;
            }
            int start = src.rowStart(b, h, 0);
            boolean allMasked = true;
            for (int j = j0; j < j1 && allMasked; j++) {
                allMasked = src.data()[start + j] == 0f;
            }
            if (allMasked) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@link #transform} leaves every score of batch {@code b}, head {@code h} for keys
     * {@code [j0, j1)} unchanged, for every query: no ALiBi, no bias, and every keep source is
     * query-independent (key padding) and keeps all these keys. Lets a tile skip the per-row pass.
     */
    boolean keepsAllKeys(int b, int h, int j0, int j1) {
        if (bias.length > 0 || alibi != null) {
            return false;
        }
        for (RowSource src : keep) {
            if (src.rowStride() != 0) {
                return false;
            }
            int start = src.rowStart(b, h, 0);
            for (int j = j0; j < j1; j++) {
                if (src.data()[start + j] == 0f) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether {@link #transform} changes anything: there are ALiBi, keep or bias sources. */
    boolean hasTransforms() {
        return alibi != null || keep.length + bias.length > 0;
    }

    /**
     * Biases and masks {@code n} scaled (and soft-capped) scores {@code s[off..off+n)} of query
     * {@code t} of row {@code b}, head {@code h}, for keys {@code [j0, j0+n)} in place: ALiBi and
     * every bias source times {@code unit} ({@code log2 e} for the base-2 online softmax, 1
     * otherwise), then the keep sources. The key range is not applied here: callers cut it.
     */
    void transform(float[] s, int off, int n, int b, int h, int t, int j0, float unit) {
        if (alibi != null) {
            Kernels.ROWS.addDistanceBias(s, off, n, alibi[h] * unit, of(origin, b) + t - j0);
        }
        for (RowSource src : bias) {
            Kernels.ROWS.addBias(s, off, n, src.data(), src.rowStart(b, h, t) + j0, unit);
        }
        for (RowSource src : keep) {
            Kernels.ROWS.mask(s, off, n, src.data(), src.rowStart(b, h, t) + j0);
        }
    }
}
