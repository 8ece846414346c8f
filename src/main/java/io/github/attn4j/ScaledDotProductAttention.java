package io.github.attn4j;

import io.github.attn4j.internal.kernel.AttentionKernel;
import io.github.attn4j.internal.kernel.HeadLayout;

/**
 * {@code softmax(scale * Q Kᵀ + mask) V} over already projected heads, like PyTorch's
 * {@code F.scaled_dot_product_attention}: static {@code apply} methods for the plain case, and
 * a configured instance ({@link #builder()}) for soft-capping, attention sinks, a thread count,
 * and attention over a {@link KvCache}.
 *
 * <p><b>Order of operations</b> for each score: {@code s = scale · q·k} → soft-cap
 * {@code cap · tanh(s / cap)} (if set) → {@code +} additive mask parts and ALiBi → masked keys
 * {@code -Infinity} → softmax over the row's keys plus the head's sink term {@code exp(sink)}
 * (if set), which has no value → weights · V. A row whose keys are all masked gives a zero
 * output, sinks or not.
 *
 * <p>Shapes: {@code q (B, H, Lq, d)}, {@code k (B, KVH, Lk, d)}, {@code v (B, KVH, Lk, dv)},
 * result {@code (B, H, Lq, dv)}. {@code KVH} must divide {@code H}; query head {@code h} reads
 * key/value head {@code h / (H / KVH)} (grouped-query attention, PyTorch's
 * {@code enable_gqa=True}) without copying K or V. The mask semantics are those of
 * {@link AttentionMask}; a query whose keys are all masked gets a zero output. The
 * {@code L x L} score matrix is never materialized.
 */
public final class ScaledDotProductAttention {
    private final float scale;
    private final float softcap;
    private final float[] sinks;
    private final int threads;

    private ScaledDotProductAttention(Builder b) {
        this.scale = b.scale;
        this.softcap = b.softcap;
        this.sinks = b.sinks;
        this.threads = b.threads;
    }

    /**
     * Starts a configured attention: scale, soft-cap, sinks and threads.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of a {@link ScaledDotProductAttention}; every one is optional. */
    public static final class Builder {
        private float scale = Float.NaN;
        private float softcap;
        private float[] sinks;
        private int threads = Runtime.getRuntime().availableProcessors();

        private Builder() {
        }

        /**
         * Factor on {@code q·k}; default {@code 1/sqrt(d)}. Must be finite.
         *
         * @param scale the factor on {@code q·k}
         * @return this builder
         */
        public Builder scale(float scale) {
            Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
            this.scale = scale;
            return this;
        }

        /**
         * Soft-cap {@code s -> cap * tanh(s / cap)}, after scaling, before biases and masks. Must be finite and positive.
         *
         * @param cap the soft-cap
         * @return this builder
         */
        public Builder softcap(float cap) {
            Checks.check(Float.isFinite(cap) && cap > 0, "softcap", "a finite positive value", cap);
            this.softcap = cap;
            return this;
        }

        /**
         * One logit per query head: {@code exp(logit)} joins the softmax denominator, with no value. Copied.
         *
         * @param logits one logit per query head
         * @return this builder
         */
        public Builder sinks(float[] logits) {
            Checks.notNull(logits, "sinks");
            for (int h = 0; h < logits.length; h++) {
                if (!Float.isFinite(logits[h])) {
                    throw Checks.fail("sinks[" + h + "]", "a finite value", logits[h]);
                }
            }
            this.sinks = logits.clone();
            return this;
        }

        /**
         * Threads one call may use; default: available processors. Results are bit-identical for every count.
         *
         * @param threads the number of threads one call may use
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = Checks.positive(threads, "threads");
            return this;
        }

        /**
         * Builds the configured attention.
         *
         * @return the configured attention
         */
        public ScaledDotProductAttention build() {
            return new ScaledDotProductAttention(this);
        }
    }

    /**
     * Attention of {@code q (B, H, Lq, d)} over {@code k (B, KVH, Lk, d)} and
     * {@code v (B, KVH, Lk, dv)}; returns {@code (B, H, Lq, dv)}.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, H, Lq, dv)}
     * @throws IllegalArgumentException if shapes disagree, the mask does not fit the scores, or
     *                                  the sinks are not one per query head
     */
    public Tensor attend(Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        return run(q, k, v, mask, scores(q), false, threads, null).output();
    }

    /**
     * Like {@link #attend(Tensor, Tensor, Tensor, AttentionMask)}, writing the output into
     * {@code out} instead of a new tensor: same bits, no result allocated. {@code out} may be
     * backed by a {@code float[]} or by a writable {@link java.lang.foreign.MemorySegment}. It may
     * share its array with {@code q}, {@code k}, {@code v} or a tensor of {@code mask}: the
     * result is then computed into a buffer the calling thread keeps and copied into {@code out}
     * at the end, as for a segment.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @param out receives the output {@code (B, H, Lq, dv)}
     * @return {@code out}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if shapes disagree, the mask does not fit the scores, the
     *                                  sinks are not one per query head, or {@code out} is not of
     *                                  shape {@code (B, H, Lq, dv)} or is over a read-only segment
     */
    public Tensor attend(Tensor q, Tensor k, Tensor v, AttentionMask mask, Tensor out) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        Checks.notNull(out, "out");
        run(q, k, v, mask, scores(q), false, threads, out);
        return out;
    }

    /**
     * Attention of {@code q (B, H, T, d)}, the T newest cached tokens of every row (already
     * appended), over everything row b holds, causal per row: query t of row b sits at position
     * {@code cache.length(b) - T + t} and sees the keys up to it; {@code mask} joins the causal
     * one (sliding window, ALiBi, and tensor parts read with Lk = the longest row). Returns
     * {@code (B, H, T, headDim)}.
     *
     * @param q queries {@code (B, H, T, d)}
     * @param cache the keys and values, the queries' tokens already appended
     * @param mask the mask joined to the causal one
     * @return the output {@code (B, H, T, headDim)}
     * @throws IllegalArgumentException if shapes disagree with the cache, a row holds fewer than
     *                                  T tokens, or the mask or sinks do not fit
     */
    public Tensor attend(Tensor q, KvCache cache, AttentionMask mask) {
        Checks.rank(q, 4, "q", "(B, H, T, d)");
        Checks.notNull(cache, "cache");
        Checks.notNull(mask, "mask");
        int batch = q.dim(0), heads = q.dim(1), t = q.dim(2), d = q.dim(3);
        Checks.dim(q, 0, cache.batch(), "q", "batch B of the cache");
        Checks.dim(q, 3, cache.headDim(), "q", "headDim of the cache");
        if (heads % cache.kvHeads() != 0) {
            throw Checks.fail("q", "a number of heads that is a multiple of the cache's "
                    + cache.kvHeads() + " kv heads", heads);
        }
        int[] rowKeys = cache.lengths();
        for (int b = 0; b < batch; b++) {
            if (rowKeys[b] < t) {
                throw Checks.fail("cache.length(" + b + ")", "at least T = " + t + " (the queries' tokens are cached)",
                        rowKeys[b]);
            }
        }
        int keys = cache.length();
        mask.checkApplicable(batch, heads, t, keys);
        int[] rowQueries = new int[batch];
        java.util.Arrays.fill(rowQueries, t);
        Tensor out = Tensor.zeros(batch, heads, t, d);
        AttentionKernel.forward(HeadLayout.headsMajor(q.data(), batch, heads, t, d), cache.panels(), cache.kvHeads(),
                HeadLayout.headsMajor(out.data(), batch, heads, t, d),
                AttentionMask.causal().and(mask).toScoreMask(batch, t, keys, rowKeys, rowQueries), scores(q), threads);
        return out;
    }

    private AttentionKernel.Scores scores(Tensor q) {
        int heads = q.dim(1);
        if (sinks != null) {
            if (sinks.length != heads) {
                throw Checks.fail("sinks", "one logit per query head (" + heads + ")", "length " + sinks.length);
            }
        }
        float s = Float.isNaN(scale) ? (float) (1.0 / Math.sqrt(q.dim(3))) : scale;
        return new AttentionKernel.Scores(s, softcap, sinks);
    }

    /**
     * Attention with the default scale {@code 1 / sqrt(d)}.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        return apply(q, k, v, mask, (float) (1.0 / Math.sqrt(q.dim(3))));
    }

    /**
     * Attention with an explicit scale applied to {@code Q Kᵀ} before masking, on all available processors.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @param scale the factor applied to {@code Q Kᵀ}
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale) {
        return apply(q, k, v, mask, scale, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Attention on up to {@code threads} threads; the result is bit-identical for every thread
     * count.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @param scale the factor applied to {@code Q Kᵀ}
     * @param threads the number of threads to use at most
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale, int threads) {
        Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
        return run(q, k, v, mask, AttentionKernel.Scores.scaled(scale), false, Checks.positive(threads, "threads"), null).output();
    }

    /**
     * Attention that also returns the softmax weights {@code (B, H, Lq, Lk)}; the weights are
     * materialized, so memory grows with {@code Lq * Lk}.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @param scale the factor applied to {@code Q Kᵀ}
     * @return the output {@code (B, H, Lq, dv)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput applyWithWeights(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale) {
        Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
        return run(q, k, v, mask, AttentionKernel.Scores.scaled(scale), true, Runtime.getRuntime().availableProcessors(), null);
    }

    /**
     * Like {@link #attend(Tensor, Tensor, Tensor, AttentionMask)}, and also returns the softmax
     * weights {@code (B, H, Lq, Lk)} (sink excluded: with sinks a row sums to less than 1); the
     * weights are materialized, so memory grows with {@code Lq * Lk}.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, H, Lq, dv)} and the weights {@code (B, H, Lq, Lk)}
     */
    public AttentionOutput attendWithWeights(Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        return run(q, k, v, mask, scores(q), true, threads, null);
    }

    /** Every uncached entry point; {@code target} (checked here) receives the output, or null for a new tensor. */
    private static AttentionOutput run(Tensor q, Tensor k, Tensor v, AttentionMask mask, AttentionKernel.Scores scores,
                                       boolean withWeights, int threads, Tensor target) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        Checks.rank(k, 4, "k", "(B, KVH, Lk, d)");
        Checks.rank(v, 4, "v", "(B, KVH, Lk, dv)");
        Checks.notNull(mask, "mask");
        int batch = q.dim(0), heads = q.dim(1), lq = q.dim(2), d = q.dim(3);
        int kvHeads = k.dim(1), lk = k.dim(2), dv = v.dim(3);
        Checks.dim(k, 0, batch, "k", "batch B (from q)");
        Checks.dim(k, 3, d, "k", "head width d (from q)");
        Checks.dim(v, 0, batch, "v", "batch B (from q)");
        Checks.dim(v, 1, kvHeads, "v", "key/value heads KVH (from k)");
        Checks.dim(v, 2, lk, "v", "key length Lk (from k)");
        if (!(kvHeads > 0 ? heads % kvHeads == 0 : heads == 0)) {
            throw Checks.fail("k",
                    "a number of key/value heads that divides the " + heads + " query heads", kvHeads);
        }
        mask.checkApplicable(batch, heads, lq, lk);

        Checks.elementCount("output (B, H, Lq, dv)", batch, heads, lq, dv);
        if (target != null) {
            Outputs.check(target, "(B, H, Lq, dv)", batch, heads, lq, dv);
        }
        Tensor out = target != null ? target : Tensor.zeros(batch, heads, lq, dv);
        // The kernel reads q, k, v and the mask while it writes, so it never writes into their storage.
        float[] result = target != null ? Outputs.buffer(target, readsArrayOf(target, q, k, v, mask)) : out.data();
        Tensor weights = withWeights
                ? Tensor.of(new float[Checks.elementCount("weights", batch, heads, lq, lk)], batch, heads, lq, lk)
                : null;
        AttentionKernel.forward(
                HeadLayout.headsMajor(q.data(), batch, heads, lq, d),
                HeadLayout.headsMajor(k.data(), batch, kvHeads, lk, d),
                HeadLayout.headsMajor(v.data(), batch, kvHeads, lk, dv),
                HeadLayout.headsMajor(result, batch, heads, lq, dv),
                mask.toScoreMask(batch, heads, lq, lk), 0, scores,
                weights == null ? null : weights.data(), threads);
        if (target != null) {
            Outputs.publish(target, result);
        }
        return new AttentionOutput(out, weights);
    }

    /** Whether {@code out}'s array is also the array of {@code q}, {@code k}, {@code v} or a tensor of {@code mask}. */
    private static boolean readsArrayOf(Tensor out, Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        return out.sharesArray(q) || out.sharesArray(k) || out.sharesArray(v) || mask.readsArrayOf(out);
    }
}
