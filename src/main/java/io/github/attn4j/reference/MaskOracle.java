package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.Tensor;

/**
 * The masking rules of {@link AttentionMask}, read from its parts and applied one score at a
 * time, with broadcasting written out index by index. Sliding windows and ALiBi measure the
 * distance {@code |i' - j|} from the end-aligned query position {@code i' = i + (Lk - Lq)}.
 */
final class MaskOracle {
    private final AttentionMask mask;
    private final int lq;
    private final int lk;
    private final float[][] data;

    MaskOracle(AttentionMask mask, int batch, int heads, int lq, int lk) {
        this.mask = mask;
        this.lq = lq;
        this.lk = lk;
        this.data = new float[mask.parts().size()][];
        for (int p = 0; p < data.length; p++) {
            switch (mask.parts().get(p)) {
                case AttentionMask.Keep keep -> data[p] = keep.keep().toArray();
                case AttentionMask.Additive add -> data[p] = add.bias().toArray();
                default -> data[p] = null;
            }
        }
    }

    /**
     * The masked score: -Infinity if any part forbids (b, h, i, j) (causal, padding, keep, or a
     * sliding window with {@code |i' - j| >= window}), else score plus every additive bias and
     * every ALiBi term {@code -slope(h) · |i' - j|}.
     */
    double apply(double score, int b, int h, int i, int j) {
        double biasSum = 0;
        boolean forbidden = false;
        for (int p = 0; p < data.length; p++) {
            switch (mask.parts().get(p)) {
                case AttentionMask.Causal causal -> {
                    int shift = causal.endAligned() ? lk - lq : 0;
                    forbidden |= j > i + shift;
                }
                case AttentionMask.KeyPadding padding -> forbidden |= padding.isPadding(b, j);
                case AttentionMask.Keep keep -> forbidden |= data[p][index(keep.keep(), b, h, i, j)] == 0f;
                case AttentionMask.Additive add -> biasSum += data[p][index(add.bias(), b, h, i, j)];
                case AttentionMask.SlidingWindow w -> forbidden |= distance(i, j) >= w.window();
                case AttentionMask.Alibi a -> biasSum += -(double) a.slope(h) * distance(i, j);
            }
        }
        return forbidden ? Double.NEGATIVE_INFINITY : score + biasSum;
    }

    /** {@code |i' - j|} with {@code i' = i + (Lk - Lq)}, the query's position aligned to the end of the keys. */
    private long distance(int i, int j) {
        long aligned = (long) i + lk - lq;
        return Math.abs(aligned - j);
    }

    /** Row-major index of (b, h, i, j) in a rank-2 (Lq|1, Lk) or rank-4 (B|1, H|1, Lq|1, Lk) tensor, size-1 dims broadcast. */
    private static int index(Tensor t, int b, int h, int i, int j) {
        int[] s = t.shape();
        if (s.length == 2) {
            return (s[0] == 1 ? 0 : i) * s[1] + j;
        }
        int bb = s[0] == 1 ? 0 : b;
        int hh = s[1] == 1 ? 0 : h;
        int ii = s[2] == 1 ? 0 : i;
        return ((bb * s[1] + hh) * s[2] + ii) * s[3] + j;
    }
}
