package io.github.attn4j;

import io.github.attn4j.kernel.AttentionKernel;
import io.github.attn4j.kernel.HeadLayout;

/**
 * {@code softmax(scale * Q Kᵀ + mask) V} over already projected heads, like PyTorch's
 * {@code F.scaled_dot_product_attention}.
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
     * @return a builder with every option at its default
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
         * @param scale the scale, finite
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
         * @param cap the cap, finite and positive
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
         * @param logits one finite logit per query head
         * @return this builder
         */
        public Builder sinks(float[] logits) {
            Checks.notNull(logits, "sinks");
            for (int h = 0; h < logits.length; h++) {
                Checks.check(Float.isFinite(logits[h]), "sinks[" + h + "]", "a finite value", logits[h]);
            }
            this.sinks = logits.clone();
            return this;
        }

        /**
         * Threads one call may use; default: available processors. Results are bit-identical for every count.
         *
         * @param threads maximum number of threads, positive
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = Checks.positive(threads, "threads");
            return this;
        }

        /**
         * Builds the attention with these options.
         *
         * @return a new, immutable attention
         */
        public ScaledDotProductAttention build() {
            return new ScaledDotProductAttention(this);
        }
    }

    /**
     * Attention of {@code q (B,H,Lq,d)} over {@code k (B,KVH,Lk,d)}, {@code v (B,KVH,Lk,dv)}; returns {@code (B,H,Lq,dv)}.
     *
     * @param q    queries {@code (B, H, Lq, d)}
     * @param k    keys {@code (B, KVH, Lk, d)}
     * @param v    values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to, see {@link AttentionMask}
     * @return the output {@code (B, H, Lq, dv)}
     */
    public Tensor attend(Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Attention of {@code q (B,H,T,d)}, the T newest cached tokens of every row, over the cache, causal per row.
     *
     * @param q     queries of the T newest cached tokens {@code (B, H, T, d)}
     * @param cache the keys and values, the new tokens already appended
     * @param mask  joined with the causal mask
     * @return the output {@code (B, H, T, d)}
     */
    public Tensor attend(Tensor q, KvCache cache, AttentionMask mask) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Attention with the default scale {@code 1 / sqrt(d)}.
     *
     * @param q    queries {@code (B, H, Lq, d)}
     * @param k    keys {@code (B, KVH, Lk, d)}
     * @param v    values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to, see {@link AttentionMask}
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask) {
        Checks.rank(q, 4, "q", "(B, H, Lq, d)");
        return apply(q, k, v, mask, (float) (1.0 / Math.sqrt(q.dim(3))));
    }

    /**
     * Attention with an explicit scale applied to {@code Q Kᵀ} before masking, on all available processors.
     *
     * @param q     queries {@code (B, H, Lq, d)}
     * @param k     keys {@code (B, KVH, Lk, d)}
     * @param v     values {@code (B, KVH, Lk, dv)}
     * @param mask  which keys each query attends to, see {@link AttentionMask}
     * @param scale factor applied to {@code Q Kᵀ}
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale) {
        return apply(q, k, v, mask, scale, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Attention on up to {@code threads} threads; the result is bit-identical for every thread
     * count.
     *
     * @param q       queries {@code (B, H, Lq, d)}
     * @param k       keys {@code (B, KVH, Lk, d)}
     * @param v       values {@code (B, KVH, Lk, dv)}
     * @param mask    which keys each query attends to, see {@link AttentionMask}
     * @param scale   factor applied to {@code Q Kᵀ}
     * @param threads maximum number of threads, positive
     * @return the output {@code (B, H, Lq, dv)}
     */
    public static Tensor apply(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale, int threads) {
        return run(q, k, v, mask, scale, false, Checks.positive(threads, "threads")).output();
    }

    /**
     * Attention that also returns the softmax weights {@code (B, H, Lq, Lk)}; the weights are
     * materialized, so memory grows with {@code Lq * Lk}.
     *
     * @param q     queries {@code (B, H, Lq, d)}
     * @param k     keys {@code (B, KVH, Lk, d)}
     * @param v     values {@code (B, KVH, Lk, dv)}
     * @param mask  which keys each query attends to, see {@link AttentionMask}
     * @param scale factor applied to {@code Q Kᵀ}
     * @return the output {@code (B, H, Lq, dv)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput applyWithWeights(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale) {
        return run(q, k, v, mask, scale, true, Runtime.getRuntime().availableProcessors());
    }

    private static AttentionOutput run(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale, boolean withWeights,
                                       int threads) {
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
        Checks.check(kvHeads > 0 ? heads % kvHeads == 0 : heads == 0, "k",
                "a number of key/value heads that divides the " + heads + " query heads", kvHeads);
        Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
        mask.checkApplicable(batch, heads, lq, lk);

        Checks.elementCount("output (B, H, Lq, dv)", batch, heads, lq, dv);
        Tensor out = Tensor.zeros(batch, heads, lq, dv);
        Tensor weights = withWeights
                ? Tensor.of(new float[Checks.elementCount("weights", batch, heads, lq, lk)], batch, heads, lq, lk)
                : null;
        AttentionKernel.forward(
                HeadLayout.headsMajor(q.data(), batch, heads, lq, d),
                HeadLayout.headsMajor(k.data(), batch, kvHeads, lk, d),
                HeadLayout.headsMajor(v.data(), batch, kvHeads, lk, dv),
                HeadLayout.headsMajor(out.data(), batch, heads, lq, dv),
                mask.toScoreMask(batch, heads, lq, lk), scale,
                weights == null ? null : weights.data(), threads);
        return new AttentionOutput(out, weights);
    }
}
