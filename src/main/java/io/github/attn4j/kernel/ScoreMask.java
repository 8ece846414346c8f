package io.github.attn4j.kernel;

import java.util.List;

/**
 * A mask in the form the kernels consume: an optional causal limit plus rows of keep flags and
 * additive biases read straight from the caller's arrays with broadcast strides.
 *
 * <p>For scores of batch {@code b}, head {@code h}, query {@code i}, the key range
 * {@code [0, Lk)} of every {@linkplain RowSource source} starts at
 * {@code offset + b * batchStride + h * headStride + i * rowStride} and is contiguous, so a
 * stride of 0 broadcasts that dimension. Keys {@code j > i + causalShift} are masked when
 * {@code causal} is set.
 */
public final class ScoreMask {
    /** A row source: see the class comment for how a row is located. */
    public record RowSource(float[] data, int offset, int batchStride, int headStride, int rowStride) {
        int rowStart(int b, int h, int i) {
            return offset + b * batchStride + h * headStride + i * rowStride;
        }
    }

    private final boolean causal;
    private final int causalShift;
    private final RowSource[] keep;
    private final RowSource[] bias;

    /**
     * @param causal      whether keys {@code j > i + causalShift} are masked
     * @param causalShift {@code Lk - Lq} for an end-aligned causal mask, 0 for a start-aligned one
     * @param keep        sources whose 0 entries mask a key (nonzero keeps it)
     * @param bias        sources added to the scaled scores
     */
    public ScoreMask(boolean causal, int causalShift, List<RowSource> keep, List<RowSource> bias) {
        this.causal = causal;
        this.causalShift = causalShift;
        this.keep = keep.toArray(RowSource[]::new);
        this.bias = bias.toArray(RowSource[]::new);
    }

    /** Number of leading keys query {@code i} may attend when only the causal limit applies, in [0, keys]. */
    int keyLimit(int i, int keys) {
        if (!causal) {
            return keys;
        }
        long limit = (long) i + causalShift + 1;
        return (int) Math.max(0, Math.min(keys, limit));
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
     * Whether {@link #apply} leaves every score of batch {@code b}, head {@code h} for keys
     * {@code [j0, j1)} unchanged, for every query: there is no bias, and every keep source is
     * query-independent (key padding) and keeps all these keys. Lets a tile skip the per-row pass.
     */
    boolean keepsAllKeys(int b, int h, int j0, int j1) {
        if (bias.length > 0) {
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

    /**
     * Scales and masks {@code n} scores {@code s[off..off+n)} of query {@code i} for keys
     * {@code j0..j0+n)} in place and returns their maximum ({@code -Infinity} when all are masked).
     * The causal limit is not applied here: callers pass {@code n} already cut at
     * {@link #keyLimit}. Each source is one pass over the segment, which is in L1.
     */
    float scaleMaskMax(float[] s, int off, int n, int b, int h, int i, float scale, int j0) {
        if (bias.length == 0 && keep.length == 0) {
            return Kernels.ROWS.scaleMax(s, off, n, scale);
        }
        Kernels.ROWS.scale(s, off, n, scale);
        apply(s, off, n, b, h, i, j0, 1f);
        return Kernels.ROWS.max(s, off, n);
    }

    /** Whether {@link #apply} changes anything: there are keep or bias sources. */
    boolean hasSources() {
        return keep.length + bias.length > 0;
    }

    /**
     * Masks {@code n} already scaled scores {@code s[off..off+n)} of query {@code i} for keys
     * {@code j0..j0+n)} in place, adding each bias times {@code biasFactor} (the online softmax
     * works in base 2 and passes {@code log2 e}). The causal limit is not applied here.
     */
    void apply(float[] s, int off, int n, int b, int h, int i, int j0, float biasFactor) {
        for (RowSource src : bias) {
            Kernels.ROWS.addBias(s, off, n, src.data(), src.rowStart(b, h, i) + j0, biasFactor);
        }
        for (RowSource src : keep) {
            Kernels.ROWS.mask(s, off, n, src.data(), src.rowStart(b, h, i) + j0);
        }
    }
}
