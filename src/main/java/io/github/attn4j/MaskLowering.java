package io.github.attn4j;

import io.github.attn4j.internal.kernel.ScoreMask;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Lowers an {@link AttentionMask} (the user's description: a list of parts) to the
 * {@link ScoreMask} the kernels consume: per-row query positions and key ranges (causal limits,
 * the sliding window), ALiBi slopes per head, and keep and bias rows read from the mask's tensors
 * with broadcast strides (referenced, not copied).
 */
final class MaskLowering {
    private MaskLowering() {
    }

    /**
     * This mask in the kernels' form for scores {@code (batch, heads, queries, keys)}; call
     * {@link #checkApplicable} first. Tensors are referenced with broadcast strides, not copied.
     */
    static ScoreMask lower(AttentionMask mask, int batch, int queries, int keys) {
        // One entry for all rows: the lowered mask's size does not grow with the batch.
        return lower(mask, batch, queries, keys, new int[] {keys}, new int[] {queries});
    }

    /**
     * This mask in the kernels' form for ragged rows: batch row {@code b} has {@code rowKeys[b]}
     * keys and {@code rowQueries[b]} real queries (the rest attend nothing), its query {@code t}
     * at position {@code rowKeys[b] - rowQueries[b] + t} (end alignment per row), which the causal
     * limit, the sliding window and ALiBi distances use. Tensor parts are read with {@code keys}
     * (the longest row) as Lk and {@code queries} as Lq; call {@link #checkApplicable} with those
     * first. {@code rowKeys} and {@code rowQueries} may instead hold a single entry for all rows.
     */
    static ScoreMask lower(AttentionMask mask, int batch, int queries, int keys, int[] rowKeys, int[] rowQueries) {
        int perRow = rowKeys.length;
        int[] origin = new int[perRow];
        for (int b = 0; b < perRow; b++) {
            origin[b] = rowKeys[b] - rowQueries[b];
        }
        int[] causalShift = null;
        int window = 0;
        float[] slopes = null;
        List<ScoreMask.RowSource> keepRows = new ArrayList<>();
        List<ScoreMask.RowSource> biasRows = new ArrayList<>();
        for (AttentionMask.Part part : mask.parts()) {
            switch (part) {
                case AttentionMask.Causal c -> {
                    if (causalShift == null) {
                        causalShift = new int[perRow];
                        Arrays.fill(causalShift, Integer.MAX_VALUE);
                    }
                    for (int b = 0; b < perRow; b++) {
                        causalShift[b] = Math.min(causalShift[b], c.endAligned() ? origin[b] : 0);
                    }
                }
                case AttentionMask.SlidingWindow w -> window = window == 0 ? w.window() : Math.min(window, w.window());
                case AttentionMask.Alibi a -> {
                    if (slopes == null) {
                        slopes = new float[a.heads()];
                    }
                    for (int h = 0; h < slopes.length; h++) {
                        slopes[h] += a.slope(h);
                    }
                }
                case AttentionMask.KeyPadding p -> keepRows.add(new ScoreMask.RowSource(p.keepFlags(), 0, keys, 0, 0));
                case AttentionMask.Keep k -> keepRows.add(rowSource(k.keep()));
                case AttentionMask.Additive a -> biasRows.add(rowSource(a.bias()));
            }
        }
        return new ScoreMask(batch, origin, rowQueries, causalShift, window, slopes, keepRows, biasRows);
    }

    private static ScoreMask.RowSource rowSource(Tensor t) {
        int[] s = t.shape();
        if (s.length == 2) {
            return new ScoreMask.RowSource(t.data(), 0, 0, 0, s[0] == 1 ? 0 : s[1]);
        }
        int rowStride = s[3];
        int headStride = s[2] * rowStride;
        int batchStride = s[1] * headStride;
        return new ScoreMask.RowSource(t.data(), 0,
                s[0] == 1 ? 0 : batchStride, s[1] == 1 ? 0 : headStride, s[2] == 1 ? 0 : rowStride);
    }

}
