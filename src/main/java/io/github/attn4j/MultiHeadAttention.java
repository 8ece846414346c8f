package io.github.attn4j;

import io.github.attn4j.kernel.AttentionKernel;
import io.github.attn4j.kernel.HeadLayout;

/**
 * Multi-head attention with PyTorch {@code nn.MultiheadAttention} semantics ({@code batch_first=True})
 * and {@code nn.Linear} weight layouts, so weights port over one to one.
 *
 * <p>{@code forward(query (B, Lq, E), key (B, Lk, E), value (B, Lk, E))} computes
 * <pre>
 *   Q = query·Wqᵀ + bq    (B, Lq, H·hd)      K = key·Wkᵀ + bk, V = value·Wvᵀ + bv   (B, Lk, KVH·hd)
 *   per head h:  Oₕ = softmax(scale · Qₕ Kₘᵀ + mask) Vₘ,  m = h / (H / KVH)
 *   output = [O₀ … O_{H-1}]·Woᵀ + bo   (B, Lq, E)
 * </pre>
 * with {@code scale = 1/√hd} and masks as documented in {@link AttentionMask}. A built module is
 * immutable: its weights are copied and pre-packed for the GEMM kernel at build time, and it may
 * be shared between threads. One call uses up to {@link Builder#threads} threads and returns
 * the same bits whatever that number is.
 */
public final class MultiHeadAttention {
    private final int embedDim;
    private final int numHeads;
    private final int kvHeads;
    private final int headDim;
    private final float scale;
    private final int threads;
    private final Projection q;
    private final Projection k;
    private final Projection v;
    private final Projection qkv;
    private final Projection out;

    private MultiHeadAttention(Builder b, float[] wq, float[] wk, float[] wv, float[] wo,
                               float[] bq, float[] bk, float[] bv, float[] bo) {
        this.embedDim = b.embedDim;
        this.numHeads = b.numHeads;
        this.kvHeads = b.kvHeads;
        this.headDim = b.headDim;
        this.scale = (float) (1.0 / Math.sqrt(headDim));
        this.threads = b.threads;
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        this.q = new Projection(wq, bq, qWidth, embedDim);
        this.k = new Projection(wk, bk, kvWidth, embedDim);
        this.v = new Projection(wv, bv, kvWidth, embedDim);
        this.qkv = Projection.stacked(q, k, v);
        this.out = new Projection(wo, bo, embedDim, qWidth);
    }

    /** Starts a module of width {@code embedDim} with {@code numHeads} query heads. */
    public static Builder builder(int embedDim, int numHeads) {
        return new Builder(embedDim, numHeads);
    }

    /** Model width E. */
    public int embedDim() {
        return embedDim;
    }

    /** Number of query heads H. */
    public int numHeads() {
        return numHeads;
    }

    /** Number of key/value heads KVH (equal to H unless GQA/MQA). */
    public int kvHeads() {
        return kvHeads;
    }

    /** Width of one head hd. */
    public int headDim() {
        return headDim;
    }

    /** Number of threads one call may use. */
    public int threads() {
        return threads;
    }

    /** Attention of {@code query (B, Lq, E)} over {@code key, value (B, Lk, E)}; returns {@code (B, Lq, E)}. */
    public Tensor forward(Tensor query, Tensor key, Tensor value, AttentionMask mask) {
        return run(query, key, value, mask, false).output();
    }

    /** Self-attention: {@code forward(x, x, x, mask)}, with one fused Q/K/V projection. */
    public Tensor forward(Tensor x, AttentionMask mask) {
        return run(x, x, x, mask, false).output();
    }

    /**
     * Like {@link #forward(Tensor, Tensor, Tensor, AttentionMask)}, and also returns the per-head
     * attention weights {@code (B, H, Lq, Lk)} (not averaged over heads).
     */
    public AttentionOutput forwardWithWeights(Tensor query, Tensor key, Tensor value, AttentionMask mask) {
        return run(query, key, value, mask, true);
    }

    private AttentionOutput run(Tensor query, Tensor key, Tensor value, AttentionMask mask, boolean withWeights) {
        Checks.rank(query, 3, "query", "(B, Lq, E)");
        Checks.rank(key, 3, "key", "(B, Lk, E)");
        Checks.rank(value, 3, "value", "(B, Lk, E)");
        Checks.notNull(mask, "mask");
        int batch = query.dim(0), lq = query.dim(1), lk = key.dim(1);
        Checks.dim(query, 2, embedDim, "query", "embedDim E");
        Checks.dim(key, 0, batch, "key", "batch B (from query)");
        Checks.dim(key, 2, embedDim, "key", "embedDim E");
        Checks.dim(value, 0, batch, "value", "batch B (from query)");
        Checks.dim(value, 1, lk, "value", "key length Lk (from key)");
        Checks.dim(value, 2, embedDim, "value", "embedDim E");
        mask.checkApplicable(batch, numHeads, lq, lk);
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        boolean self = query == key && key == value;
        // Every size is checked before any work starts.
        int qkvSize = self ? Checks.elementCount("projected q|k|v (B*L, width)", batch, lq, qkv.outFeatures) : 0;
        int qSize = Checks.elementCount("projected query (B*Lq, H*hd)", batch, lq, qWidth);
        int kvSize = Checks.elementCount("projected key/value (B*Lk, KVH*hd)", batch, lk, kvWidth);
        int outSize = Checks.elementCount("output (B, Lq, E)", batch, lq, embedDim);
        int weightsSize = withWeights ? Checks.elementCount("weights (B, H, Lq, Lk)", batch, numHeads, lq, lk) : 0;

        HeadLayout qHeads, kHeads, vHeads;
        if (self) {
            int width = qkv.outFeatures;
            float[] buf = qkv.apply(query.data(), qkvSize, threads);
            qHeads = HeadLayout.tokenMajor(buf, 0, batch, lq, numHeads, headDim, width);
            kHeads = HeadLayout.tokenMajor(buf, qWidth, batch, lk, kvHeads, headDim, width);
            vHeads = HeadLayout.tokenMajor(buf, qWidth + kvWidth, batch, lk, kvHeads, headDim, width);
        } else {
            qHeads = HeadLayout.tokenMajor(q.apply(query.data(), qSize, threads), 0, batch, lq, numHeads, headDim, qWidth);
            kHeads = HeadLayout.tokenMajor(k.apply(key.data(), kvSize, threads), 0, batch, lk, kvHeads, headDim, kvWidth);
            vHeads = HeadLayout.tokenMajor(v.apply(value.data(), kvSize, threads), 0, batch, lk, kvHeads, headDim, kvWidth);
        }
        float[] attended = new float[qSize];
        float[] weights = withWeights ? new float[weightsSize] : null;
        AttentionKernel.forward(qHeads, kHeads, vHeads,
                HeadLayout.tokenMajor(attended, 0, batch, lq, numHeads, headDim, qWidth),
                mask.toScoreMask(batch, numHeads, lq, lk), scale, weights, threads);
        float[] result = out.apply(attended, outSize, threads);
        return new AttentionOutput(Tensor.of(result, batch, lq, embedDim),
                weights == null ? null : Tensor.of(weights, batch, numHeads, lq, lk));
    }

    /** Configures and validates a {@link MultiHeadAttention}. */
    public static final class Builder {
        private final int embedDim;
        private final int numHeads;
        private int headDim;
        private boolean headDimSet;
        private int kvHeads;
        private boolean bias = true;
        private float[] wq, wk, wv, wo;
        private float[] bq, bk, bv, bo;
        private long seed;
        private int threads = Runtime.getRuntime().availableProcessors();

        private Builder(int embedDim, int numHeads) {
            this.embedDim = Checks.positive(embedDim, "embedDim");
            this.numHeads = Checks.positive(numHeads, "numHeads");
            this.kvHeads = numHeads;
        }

        /** Width of each head; default {@code embedDim / numHeads} (which must then divide evenly). */
        public Builder headDim(int headDim) {
            this.headDim = Checks.positive(headDim, "headDim");
            this.headDimSet = true;
            return this;
        }

        /** Number of key/value heads; default {@code numHeads}. Fewer gives GQA (1 gives MQA); must divide {@code numHeads}. */
        public Builder kvHeads(int numKvHeads) {
            this.kvHeads = Checks.positive(numKvHeads, "kvHeads");
            return this;
        }

        /** Whether the projections have biases; default true. */
        public Builder bias(boolean bias) {
            this.bias = bias;
            return this;
        }

        /**
         * Projection weights in {@code nn.Linear} layout {@code (out_features, in_features)},
         * row-major: wq {@code (H·hd, E)}, wk and wv {@code (KVH·hd, E)}, wo {@code (E, H·hd)}.
         * Copied at {@link #build()}.
         */
        public Builder weights(float[] wq, float[] wk, float[] wv, float[] wo) {
            this.wq = Checks.notNull(wq, "wq");
            this.wk = Checks.notNull(wk, "wk");
            this.wv = Checks.notNull(wv, "wv");
            this.wo = Checks.notNull(wo, "wo");
            return this;
        }

        /** Projection biases: bq {@code (H·hd)}, bk and bv {@code (KVH·hd)}, bo {@code (E)}. Copied at {@link #build()}. */
        public Builder biases(float[] bq, float[] bk, float[] bv, float[] bo) {
            this.bq = Checks.notNull(bq, "bq");
            this.bk = Checks.notNull(bk, "bk");
            this.bv = Checks.notNull(bv, "bv");
            this.bo = Checks.notNull(bo, "bo");
            return this;
        }

        /**
         * Seed of the random initialization used when no weights are given (default 0). It
         * follows PyTorch's bounds: Q/K/V weights Xavier-uniform over the stacked
         * {@code (H·hd + 2·KVH·hd, E)} matrix, the output weight uniform in
         * {@code ±1/√(H·hd)}, biases zero.
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Threads one forward call may use (default: available processors). Work is split into
         * independent blocks of rows and (head, query tile) pairs, each reduced in a fixed order,
         * so the output is bit-identical for every thread count.
         */
        public Builder threads(int threads) {
            this.threads = Checks.positive(threads, "threads");
            return this;
        }

        /**
         * Validates the configuration and builds the module.
         *
         * @throws IllegalArgumentException naming the offending setting, expected vs actual
         */
        public MultiHeadAttention build() {
            if (!headDimSet) {
                Checks.check(embedDim % numHeads == 0, "embedDim",
                        "a multiple of numHeads = " + numHeads + " (or set headDim explicitly)", embedDim);
                headDim = embedDim / numHeads;
            }
            Checks.check(numHeads % kvHeads == 0, "kvHeads", "a divisor of numHeads = " + numHeads, kvHeads);
            long qWidth = (long) numHeads * headDim;
            long kvWidth = (long) kvHeads * headDim;
            Checks.elementCount("wq (H*hd, E)", qWidth, embedDim);
            Checks.elementCount("stacked q|k|v weights", qWidth + 2 * kvWidth, embedDim);
            float[] q, k, v, o;
            if (wq == null) {
                Initializer init = new Initializer(seed);
                float qkvBound = (float) Math.sqrt(6.0 / (embedDim + qWidth + 2 * kvWidth));
                q = init.uniform((int) (qWidth * embedDim), qkvBound);
                k = init.uniform((int) (kvWidth * embedDim), qkvBound);
                v = init.uniform((int) (kvWidth * embedDim), qkvBound);
                o = init.uniform((int) (embedDim * qWidth), (float) (1.0 / Math.sqrt(qWidth)));
            } else {
                Checks.length(wq, qWidth * embedDim, "wq", "(H*hd " + qWidth + " x E " + embedDim + ")");
                Checks.length(wk, kvWidth * embedDim, "wk", "(KVH*hd " + kvWidth + " x E " + embedDim + ")");
                Checks.length(wv, kvWidth * embedDim, "wv", "(KVH*hd " + kvWidth + " x E " + embedDim + ")");
                Checks.length(wo, embedDim * qWidth, "wo", "(E " + embedDim + " x H*hd " + qWidth + ")");
                q = wq;
                k = wk;
                v = wv;
                o = wo;
            }
            float[] b0 = null, b1 = null, b2 = null, b3 = null;
            if (bq != null) {
                Checks.check(bias, "biases", "no biases when bias(false) is set", "four bias arrays");
                Checks.length(bq, qWidth, "bq", "(H*hd)");
                Checks.length(bk, kvWidth, "bk", "(KVH*hd)");
                Checks.length(bv, kvWidth, "bv", "(KVH*hd)");
                Checks.length(bo, embedDim, "bo", "(E)");
                b0 = bq;
                b1 = bk;
                b2 = bv;
                b3 = bo;
            }
            return new MultiHeadAttention(this, q, k, v, o, b0, b1, b2, b3);
        }
    }

    /** Uniform initializer with a fixed seed. */
    private static final class Initializer {
        private final java.util.SplittableRandom random;

        Initializer(long seed) {
            this.random = new java.util.SplittableRandom(seed);
        }

        float[] uniform(int n, float bound) {
            float[] w = new float[n];
            for (int i = 0; i < n; i++) {
                w[i] = (float) random.nextDouble(-bound, bound);
            }
            return w;
        }
    }
}
