package io.github.attn4j;

import io.github.attn4j.internal.kernel.ScoreMask;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which keys each query may attend to, and what is added to the scaled scores.
 *
 * <p>A mask is an immutable list of {@linkplain Part parts}; {@link #and(AttentionMask)} joins
 * lists, and every part applies. For scores {@code s = scale * q.k} of shape
 * {@code (B, H, Lq, Lk)} the masked score of query {@code i} and key {@code j} is:
 * <ul>
 *   <li>{@code -Infinity} if any part forbids the pair: {@link #causal()} when
 *       {@code j > i + (Lk - Lq)}; {@link #causalTopLeft()} when {@code j > i};
 *       {@link #keyPadding} / {@link #padding} when key {@code j} of that batch row is padding;
 *       {@link #keep} when the broadcast keep value is {@code 0};</li>
 *   <li>otherwise {@code s} plus the sum of every {@link #additive} bias (which may itself be
 *       {@code -Infinity}).</li>
 * </ul>
 * Softmax runs over the keys of each row. A row in which every score is {@code -Infinity}
 * (every key masked) gets zero weights and a zero attention output, never NaN.
 *
 * <p>{@code keep} and {@code additive} tensors are rank 2 {@code (Lq or 1, Lk)} or rank 4
 * {@code (B or 1, H or 1, Lq or 1, Lk)} and broadcast to {@code (B, H, Lq, Lk)}; the key
 * dimension never broadcasts. Tensors are referenced, not copied: changing their data after
 * creating the mask changes the mask. Padding flags are copied when the mask is made.
 */
public final class AttentionMask {
    private static final AttentionMask NONE = new AttentionMask(List.of());

    private final List<Part> parts;

    private AttentionMask(List<Part> parts) {
        this.parts = List.copyOf(parts);
    }

    /** One rule of a mask. The kernels and the scalar reference each interpret these. */
    public sealed interface Part permits Causal, KeyPadding, Keep, Additive, SlidingWindow, Alibi {
    }

    /**
     * Query {@code i} attends key {@code j} iff {@code j <= i + shift}, where shift is {@code Lk - Lq} when end-aligned, else 0.
     *
     * @param endAligned whether the shift is {@code Lk - Lq} (true) or 0 (false)
     */
    public record Causal(boolean endAligned) implements Part {
    }

    /** Per batch row and key: {@code true} = padding, never attended. */
    public static final class KeyPadding implements Part {
        private final int batch;
        private final int keys;
        /** The flags as the kernels read them: {@code [b * keys + j]}, 0 for padding, 1 to keep. */
        private final float[] keepFlags;

        /** Copies {@code padded} (rows already checked to share one length) into keep flags. */
        private KeyPadding(boolean[][] padded) {
            this.batch = padded.length;
            this.keys = padded.length == 0 ? 0 : padded[0].length;
            this.keepFlags = new float[Checks.elementCount("padded", batch, keys)];
            for (int b = 0; b < batch; b++) {
                for (int j = 0; j < keys; j++) {
                    keepFlags[b * keys + j] = padded[b][j] ? 0f : 1f;
                }
            }
        }

        /** The keep flags {@code [b * keys + j]} (0 = padding), made once with the mask; never written. */
        float[] keepFlags() {
            return keepFlags;
        }

        /**
         * Number of batch rows.
         *
         * @return the number of batch rows
         */
        public int batch() {
            return batch;
        }

        /**
         * Number of keys per batch row.
         *
         * @return the number of keys per batch row
         */
        public int keys() {
            return keys;
        }

        /**
         * Whether key {@code j} of batch row {@code b} is padding.
         *
         * @param b the batch row
         * @param j the key
         * @return whether that key is padding
         */
        public boolean isPadding(int b, int j) {
            return keepFlags[b * keys + j] == 0f;
        }
    }

    /**
     * Broadcast keep tensor: nonzero = attend, {@code 0} = masked.
     *
     * @param keep the keep tensor, rank 2 or rank 4
     */
    public record Keep(Tensor keep) implements Part {
    }

    /**
     * Broadcast bias added to the scaled scores; {@code -Infinity} masks.
     *
     * @param bias the bias tensor, rank 2 or rank 4
     */
    public record Additive(Tensor bias) implements Part {
    }

    /**
     * Query {@code i} attends key {@code j} iff {@code |i' - j| < window}, where
     * {@code i' = i + (Lk - Lq)} is the query's position aligned to the end of the keys (with a
     * cache: the position its token was appended at). Joined with {@link #causal()} it keeps the
     * {@code window} most recent keys up to the query itself (Mistral, Gemma 2, gpt-oss).
     *
     * @param window the number of keys in the window
     */
    public record SlidingWindow(int window) implements Part {
    }

    /**
     * ALiBi: adds {@code -slope(h) * |i' - j|} to head {@code h}'s scaled scores, with {@code i'}
     * as for {@link SlidingWindow}. Computed per score, never materialized.
     */
    public static final class Alibi implements Part {
        private final float[] slopes;

        private Alibi(float[] slopes) {
            this.slopes = slopes;
        }

        /**
         * Number of heads (one slope each).
         *
         * @return the number of heads
         */
        public int heads() {
            return slopes.length;
        }

        /**
         * Slope of head {@code h}.
         *
         * @param h the head
         * @return the slope of head {@code h}
         */
        public float slope(int h) {
            return slopes[h];
        }

        @Override
        public String toString() {
            return "Alibi" + Arrays.toString(slopes);
        }
    }

    /**
     * No masking.
     *
     * @return the empty mask
     */
    public static AttentionMask none() {
        return NONE;
    }

    /**
     * Causal mask aligned to the end: query {@code i} attends key {@code j} iff
     * {@code j <= i + (Lk - Lq)}, so the last query sees every key (new queries after cached
     * keys). Equals PyTorch's {@code is_causal=True} when {@code Lq == Lk}.
     *
     * @return the end-aligned causal mask
     */
    public static AttentionMask causal() {
        return new AttentionMask(List.of(new Causal(true)));
    }

    /**
     * Causal mask aligned to the start (PyTorch's {@code torch.tril(ones(Lq, Lk))} convention):
     * query {@code i} attends key {@code j} iff {@code j <= i}. Same as {@link #causal()} when
     * {@code Lq == Lk}.
     *
     * @return the start-aligned causal mask
     */
    public static AttentionMask causalTopLeft() {
        return new AttentionMask(List.of(new Causal(false)));
    }

    /**
     * Key padding, {@code [B][Lk]} with {@code true} = padding key (PyTorch's
     * {@code key_padding_mask} with booleans). The flags are copied.
     *
     * @param padded padding flags {@code [B][Lk]}, {@code true} = padding
     * @return the key padding mask
     */
    public static AttentionMask keyPadding(boolean[][] padded) {
        Checks.notNull(padded, "padded");
        for (int b = 0; b < padded.length; b++) {
            Checks.notNull(padded[b], "padded[" + b + "]");
            if (padded[b].length != padded[0].length) {
                throw Checks.fail("padded[" + b + "]",
                        "length " + padded[0].length + " (all rows must have Lk keys)", "length " + padded[b].length);
            }
        }
        return new AttentionMask(List.of(new KeyPadding(padded)));     // the keep flags are the copy
    }

    /**
     * Key padding from token ids {@code [B][Lk]}: key {@code j} of row {@code b} is padding iff its id equals {@code padId}.
     *
     * @param tokenIds token ids {@code [B][Lk]}
     * @param padId the id of the padding token
     * @return the key padding mask
     */
    public static AttentionMask padding(int[][] tokenIds, int padId) {
        Checks.notNull(tokenIds, "tokenIds");
        boolean[][] padded = new boolean[tokenIds.length][];
        for (int b = 0; b < tokenIds.length; b++) {
            Checks.notNull(tokenIds[b], "tokenIds[" + b + "]");
            if (tokenIds[b].length != tokenIds[0].length) {
                throw Checks.fail("tokenIds[" + b + "]",
                        "length " + tokenIds[0].length + " (rows must be padded to one length, see Embedding.pad)",
                        "length " + tokenIds[b].length);
            }
            padded[b] = new boolean[tokenIds[b].length];
            for (int j = 0; j < padded[b].length; j++) {
                padded[b][j] = tokenIds[b][j] == padId;
            }
        }
        return new AttentionMask(List.of(new KeyPadding(padded)));
    }

    /**
     * Keep mask: nonzero = attend, {@code 0} = masked (the textbook
     * {@code masked_fill(mask == 0, -inf)}). Rank 2 {@code (Lq or 1, Lk)} or rank 4
     * {@code (B or 1, H or 1, Lq or 1, Lk)}.
     *
     * @param keep the keep tensor
     * @return the keep mask
     */
    public static AttentionMask keep(Tensor keep) {
        MaskChecks.broadcastRank(keep, "keep");
        return new AttentionMask(List.of(new Keep(keep)));
    }

    /**
     * Additive bias on the scaled scores; {@code -Infinity} masks. The TensorFlow convention
     * {@code logits += mask * -1e9} is {@code additive(mask * -1e9)}. Rank 2 or rank 4 as for
     * {@link #keep(Tensor)}.
     *
     * @param bias the bias tensor
     * @return the additive mask
     */
    public static AttentionMask additive(Tensor bias) {
        MaskChecks.broadcastRank(bias, "bias");
        return new AttentionMask(List.of(new Additive(bias)));
    }

    /**
     * Sliding window of {@code window} keys: key {@code j} is masked for query {@code i} when
     * {@code |i' - j| >= window}, {@code i' = i + (Lk - Lq)}. Usually joined with
     * {@link #causal()}: {@code causal().and(slidingWindow(4096))}. Whole key tiles outside
     * every row's window are skipped, so the cost grows with {@code L · window}, not {@code L²}.
     *
     * @param window the number of keys in the window
     * @return the sliding-window mask
     * @throws IllegalArgumentException if {@code window < 1}
     */
    public static AttentionMask slidingWindow(int window) {
        Checks.check(window >= 1, "window", "at least 1", window);
        return new AttentionMask(List.of(new SlidingWindow(window)));
    }

    /**
     * ALiBi biases (BLOOM, MPT): head {@code h}'s score for query {@code i} and key {@code j} gets
     * {@code -slopes[h] * |i' - j|}, {@code i' = i + (Lk - Lq)}; computed on the fly, never
     * materialized. The slopes are copied; there must be one per query head.
     *
     * @param slopes one slope per query head
     * @return the ALiBi mask
     * @throws IllegalArgumentException if a slope is not finite or {@code slopes} is empty
     */
    public static AttentionMask alibi(float[] slopes) {
        Checks.notNull(slopes, "slopes");
        Checks.check(slopes.length > 0, "slopes", "one slope per query head (at least one)", "length 0");
        for (int h = 0; h < slopes.length; h++) {
            if (!Float.isFinite(slopes[h])) {
                throw Checks.fail("slopes[" + h + "]", "a finite value", slopes[h]);
            }
        }
        return new AttentionMask(List.of(new Alibi(slopes.clone())));
    }

    /**
     * The slopes of the ALiBi paper (Press et al.) for {@code heads} heads:
     * {@code 2^(-8(h+1)/n)} for the largest power of two {@code n <= heads}, then the odd
     * multiples of {@code 2^(-4/n)} for the rest, as BLOOM computes them.
     *
     * @param heads the number of heads
     * @return one slope per head
     */
    public static float[] alibiSlopes(int heads) {
        Checks.positive(heads, "heads");
        int n = Integer.highestOneBit(heads);
        float[] slopes = new float[heads];
        for (int h = 0; h < n; h++) {
            slopes[h] = (float) Math.pow(2, -8.0 * (h + 1) / n);
        }
        for (int h = n; h < heads; h++) {
            slopes[h] = (float) Math.pow(2, -4.0 * (2 * (h - n) + 1) / n);
        }
        return slopes;
    }

    /**
     * A mask in which both this and {@code other} apply.
     *
     * @param other the mask to join
     * @return the joined mask
     */
    public AttentionMask and(AttentionMask other) {
        Checks.notNull(other, "other");
        List<Part> all = new ArrayList<>(parts);
        all.addAll(other.parts);
        return new AttentionMask(all);
    }

    /**
     * The parts of this mask, in the order they were joined.
     *
     * @return the parts, in join order
     */
    public List<Part> parts() {
        return parts;
    }

    /**
     * Checks that every part fits scores of shape {@code (batch, heads, queries, keys)}.
     *
     * @param batch the batch size B
     * @param heads the number of query heads H
     * @param queries the number of queries Lq
     * @param keys the number of keys Lk
     * @throws IllegalArgumentException naming the part and the expected vs actual shape
     */
    public void checkApplicable(int batch, int heads, int queries, int keys) {
        MaskChecks.applicable(parts, batch, heads, queries, keys);
    }

    /** Whether one of this mask's tensors (keep or additive) is backed by {@code t}'s array. */
    boolean readsArrayOf(Tensor t) {
        for (Part part : parts) {
            if ((part instanceof Keep(Tensor keep) && t.sharesArray(keep))
                    || (part instanceof Additive(Tensor bias) && t.sharesArray(bias))) {
                return true;
            }
        }
        return false;
    }

    /** This mask in the kernels' form for scores {@code (batch, heads, queries, keys)}: see {@link MaskLowering}. */
    ScoreMask toScoreMask(int batch, int heads, int queries, int keys) {
        return MaskLowering.lower(this, batch, queries, keys);
    }

    /** This mask in the kernels' form for ragged rows: see {@link MaskLowering}. */
    ScoreMask toScoreMask(int batch, int queries, int keys, int[] rowKeys, int[] rowQueries) {
        return MaskLowering.lower(this, batch, queries, keys, rowKeys, rowQueries);
    }

    @Override
    public String toString() {
        return "AttentionMask" + parts;
    }
}
