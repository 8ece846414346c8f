package io.github.attn4j;

import io.github.attn4j.kernel.AttentionKernel;
import io.github.attn4j.kernel.HeadLayout;

/**
 * Multi-head attention with PyTorch {@code nn.MultiheadAttention} semantics ({@code batch_first=True})
 * and {@code nn.Linear} weight layouts, so weights port over one to one.
 *
 * <p>{@code forward(query (B, Lq, E), key (B, Lk, keyDim), value (B, Lk, valueDim))} (keyDim and
 * valueDim default to E) computes
 * <pre>
 *   Q = query·Wqᵀ + bq    (B, Lq, H·hd)      K = key·Wkᵀ + bk, V = value·Wvᵀ + bv   (B, Lk, KVH·hd)
 *   per head h:  Oₕ = softmax(scale · Qₕ Kₘᵀ + mask) Vₘ,  m = h / (H / KVH)
 *   output = [O₀ … O_{H-1}]·Woᵀ + bo   (B, Lq, E)
 * </pre>
 * with {@code scale = 1/√hd} unless {@link Builder#scale} sets it, and masks as documented in {@link AttentionMask}. A built module is
 * immutable: its weights are copied and pre-packed for the GEMM kernel at build time, and it may
 * be shared between threads. One call uses up to {@link Builder#threads} threads and returns
 * the same bits whatever that number is.
 */
public final class MultiHeadAttention {
    private final int embedDim;
    private final int numHeads;
    private final int kvHeads;
    private final int headDim;
    private final int keyDim;
    private final int valueDim;
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
        this.keyDim = b.keyDim;
        this.valueDim = b.valueDim;
        this.scale = Float.isNaN(b.scale) ? (float) (1.0 / Math.sqrt(headDim)) : b.scale;
        this.threads = b.threads;
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        this.q = new Projection(wq, bq, qWidth, embedDim);
        this.k = new Projection(wk, bk, kvWidth, keyDim);
        this.v = new Projection(wv, bv, kvWidth, valueDim);
        this.qkv = keyDim == embedDim && valueDim == embedDim ? Projection.stacked(q, k, v) : null;
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

    /** Width of the keys fed to {@code forward} (PyTorch {@code kdim}); {@code embedDim} unless set. */
    public int keyDim() {
        return keyDim;
    }

    /** Width of the values fed to {@code forward} (PyTorch {@code vdim}); {@code embedDim} unless set. */
    public int valueDim() {
        return valueDim;
    }

    /** Factor applied to {@code Q Kᵀ} before masking and softmax. */
    public float scale() {
        return scale;
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

    /**
     * A new, empty key/value cache for {@code batch} sequences with room for {@code capacity}
     * tokens each before it grows. See {@link #forwardCached}.
     */
    public KvCache newKvCache(int batch, int capacity) {
        Checks.check(batch >= 0, "batch", "a non-negative batch size", batch);
        Checks.check(capacity >= 0, "capacity", "a non-negative capacity", capacity);
        return new KvCache(this, batch, kvHeads, headDim, capacity);
    }

    /**
     * Like {@link #newKvCache(int, int)}, storing keys and values in {@code precision}: F16 and
     * BF16 halve the cache's memory and the bytes each decoding step streams, INT8 takes 0.28x.
     *
     * @throws NullPointerException if {@code precision} is null
     */
    public KvCache newKvCache(int batch, int capacity, Precision precision) {
        Checks.check(batch >= 0, "batch", "a non-negative batch size", batch);
        Checks.check(capacity >= 0, "capacity", "a non-negative capacity", capacity);
        return new KvCache(this, batch, kvHeads, headDim, capacity, precision);
    }

    /**
     * Self-attention of new tokens {@code xNew (B, T, E)} over everything cached plus themselves:
     * projects them, appends their keys and values to {@code cache}, and attends each new token
     * causally (end-aligned, so token {@code t} sees every cached token and new tokens up to
     * itself). Feeding a sequence in chunks gives the same result as {@code forward(x, causal())}
     * within float rounding. Returns {@code (B, T, E)}.
     *
     * @throws IllegalArgumentException if the cache was made by another module, batch sizes
     *                                  disagree, or keyDim/valueDim differ from embedDim
     */
    public Tensor forwardCached(Tensor xNew, KvCache cache) {
        Checks.rank(xNew, 3, "xNew", "(B, T, E)");
        Checks.notNull(cache, "cache");
        Checks.check(cache.owner() == this, "cache", "a cache made by this module's newKvCache", "a cache of another module");
        Checks.dim(xNew, 0, cache.batch(), "xNew", "batch B of the cache");
        Checks.dim(xNew, 2, embedDim, "xNew", "embedDim E");
        Checks.check(qkv != null, "keyDim/valueDim", "equal to embedDim = " + embedDim + " for cached self-attention",
                keyDim + "/" + valueDim);
        int batch = xNew.dim(0), tokens = xNew.dim(1);
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        int width = qkv.outFeatures;
        cache.checkRoom(tokens, null);
        int outSize = Checks.elementCount("output (B, T, E)", batch, tokens, embedDim);
        float[] buf = qkv.apply(xNew.data(), Checks.elementCount("projected q|k|v (B*T, width)", batch, tokens, width), threads);
        cache.append(HeadLayout.tokenMajor(buf, qWidth, batch, tokens, kvHeads, headDim, width),
                HeadLayout.tokenMajor(buf, qWidth + kvWidth, batch, tokens, kvHeads, headDim, width), null);
        int[] rowKeys = cache.lengths();
        int[] rowQueries = new int[batch];
        java.util.Arrays.fill(rowQueries, tokens);
        float[] attended = new float[Checks.elementCount("attention output (B, T, H*hd)", batch, tokens, qWidth)];
        // The kernel takes the query heads that share a key/value head as rows of one tile (GQA),
        // so one pass over each group's cached keys and values serves all of them.
        AttentionKernel.forward(HeadLayout.tokenMajor(buf, 0, batch, tokens, numHeads, headDim, width),
                cache.panels(), kvHeads,
                HeadLayout.tokenMajor(attended, 0, batch, tokens, numHeads, headDim, qWidth),
                AttentionMask.causal().toScoreMask(batch, tokens, cache.length(), rowKeys, rowQueries),
                AttentionKernel.Scores.scaled(scale), threads);
        return Tensor.of(out.apply(attended, outSize, threads), batch, tokens, embedDim);
    }

    /** Like {@link #forwardCached(Tensor, KvCache)}; {@code mask} joins the causal one (window, ALiBi). */
    public Tensor forwardCached(Tensor xNew, KvCache cache, AttentionMask mask) {
        throw new UnsupportedOperationException("not yet");
    }

    /** Ragged: row b takes its first {@code tokens[b]} of T. */
    public Tensor forwardCached(Tensor xNew, KvCache cache, AttentionMask mask, int[] tokens) {
        throw new UnsupportedOperationException("not yet");
    }

    private AttentionOutput run(Tensor query, Tensor key, Tensor value, AttentionMask mask, boolean withWeights) {
        Checks.rank(query, 3, "query", "(B, Lq, E)");
        Checks.rank(key, 3, "key", "(B, Lk, keyDim)");
        Checks.rank(value, 3, "value", "(B, Lk, valueDim)");
        Checks.notNull(mask, "mask");
        int batch = query.dim(0), lq = query.dim(1), lk = key.dim(1);
        Checks.dim(query, 2, embedDim, "query", "embedDim E");
        Checks.dim(key, 0, batch, "key", "batch B (from query)");
        Checks.dim(key, 2, keyDim, "key", "keyDim");
        Checks.dim(value, 0, batch, "value", "batch B (from query)");
        Checks.dim(value, 1, lk, "value", "key length Lk (from key)");
        Checks.dim(value, 2, valueDim, "value", "valueDim");
        mask.checkApplicable(batch, numHeads, lq, lk);
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        boolean self = query == key && key == value && qkv != null;
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
                mask.toScoreMask(batch, numHeads, lq, lk), AttentionKernel.Scores.scaled(scale), weights, threads);
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
        private int keyDim;
        private int valueDim;
        private float scale = Float.NaN;

        private Builder(int embedDim, int numHeads) {
            this.embedDim = Checks.positive(embedDim, "embedDim");
            this.numHeads = Checks.positive(numHeads, "numHeads");
            this.kvHeads = numHeads;
            this.keyDim = embedDim;
            this.valueDim = embedDim;
        }

        /** Width of the keys given to {@code forward} (PyTorch {@code kdim}); default {@code embedDim}. wk becomes {@code (KVH·hd, keyDim)}. */
        public Builder keyDim(int keyDim) {
            this.keyDim = Checks.positive(keyDim, "keyDim");
            return this;
        }

        /** Width of the values given to {@code forward} (PyTorch {@code vdim}); default {@code embedDim}. wv becomes {@code (KVH·hd, valueDim)}. */
        public Builder valueDim(int valueDim) {
            this.valueDim = Checks.positive(valueDim, "valueDim");
            return this;
        }

        /** Softmax scale applied to {@code Q Kᵀ}; default {@code 1/√headDim}. Must be finite. */
        public Builder scale(float scale) {
            Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
            this.scale = scale;
            return this;
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

        /** RoPE applied to q and k after projection (and QK-norm). */
        public Builder rotary(RotaryEmbedding rope) {
            throw new UnsupportedOperationException("not yet");
        }

        /** RMSNorm over each head's hd values, weights (hd), before RoPE. */
        public Builder qkNorm(float[] qWeight, float[] kWeight, float eps) {
            throw new UnsupportedOperationException("not yet");
        }

        /** Soft-cap of the scaled scores. */
        public Builder softcap(float cap) {
            throw new UnsupportedOperationException("not yet");
        }

        /** One sink logit per query head. */
        public Builder sinks(float[] logits) {
            throw new UnsupportedOperationException("not yet");
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

        /**
         * Weights in the state-dict layout of {@code nn.MultiheadAttention}: {@code in_proj_weight}
         * {@code (H·hd + 2·KVH·hd, E)} with the q, k and v rows stacked in that order ({@code (3E, E)}
         * for plain MHA), {@code in_proj_bias} likewise stacked, {@code out_proj.weight}
         * {@code (E, H·hd)} and {@code out_proj.bias} {@code (E)}. Biases may be null together (no
         * bias). Only for {@code keyDim == valueDim == embedDim}; otherwise use {@link #weights}.
         */
        public Builder pytorchWeights(float[] inProjWeight, float[] inProjBias, float[] outProjWeight, float[] outProjBias) {
            Checks.notNull(inProjWeight, "inProjWeight");
            Checks.notNull(outProjWeight, "outProjWeight");
            Checks.check((inProjBias == null) == (outProjBias == null), "inProjBias",
                    "null exactly when outProjBias is null", inProjBias == null ? "null" : "an array");
            int[] rows = stackedRows();
            Checks.length(inProjWeight, (long) (rows[0] + 2 * rows[1]) * embedDim, "inProjWeight",
                    "(H*hd + 2*KVH*hd = " + (rows[0] + 2 * rows[1]) + " x E " + embedDim + ")");
            weights(slice(inProjWeight, 0, rows[0] * embedDim), slice(inProjWeight, rows[0] * embedDim, rows[1] * embedDim),
                    slice(inProjWeight, (rows[0] + rows[1]) * embedDim, rows[1] * embedDim), outProjWeight);
            if (inProjBias != null) {
                Checks.length(inProjBias, rows[0] + 2L * rows[1], "inProjBias", "(H*hd + 2*KVH*hd)");
                biases(slice(inProjBias, 0, rows[0]), slice(inProjBias, rows[0], rows[1]),
                        slice(inProjBias, rows[0] + rows[1], rows[1]), outProjBias);
            } else {
                bias(false);
            }
            return this;
        }

        /**
         * Weights of the textbook fused-QKV layer whose {@code (3E)} outputs are reshaped to
         * {@code (B, L, H, 3·hd)} and chunked per head: output feature {@code h·3hd + c} is q,
         * {@code h·3hd + hd + c} is k and {@code h·3hd + 2hd + c} is v of head {@code h}, channel
         * {@code c}. {@code qkvWeight} is {@code (3·H·hd, E)} in {@code nn.Linear} layout,
         * {@code qkvBias} {@code (3·H·hd)} or null together with {@code outBias} (no bias). Only for
         * {@code kvHeads == numHeads}.
         */
        public Builder interleavedQkvWeights(float[] qkvWeight, float[] qkvBias, float[] outWeight, float[] outBias) {
            Checks.notNull(qkvWeight, "qkvWeight");
            Checks.notNull(outWeight, "outWeight");
            Checks.check((qkvBias == null) == (outBias == null), "qkvBias",
                    "null exactly when outBias is null", qkvBias == null ? "null" : "an array");
            Checks.check(kvHeads == numHeads, "kvHeads", "numHeads = " + numHeads + " for the per-head interleaved layout", kvHeads);
            int hd = stackedRows()[0] / numHeads;
            Checks.length(qkvWeight, 3L * numHeads * hd * embedDim, "qkvWeight", "(3*H*hd x E)");
            if (qkvBias != null) {
                Checks.length(qkvBias, 3L * numHeads * hd, "qkvBias", "(3*H*hd)");
            }
            float[][] w = new float[3][numHeads * hd * embedDim];
            float[][] b = new float[3][numHeads * hd];
            for (int h = 0; h < numHeads; h++) {
                for (int part = 0; part < 3; part++) {
                    for (int c = 0; c < hd; c++) {
                        int from = h * 3 * hd + part * hd + c;
                        int to = h * hd + c;
                        System.arraycopy(qkvWeight, from * embedDim, w[part], to * embedDim, embedDim);
                        if (qkvBias != null) {
                            b[part][to] = qkvBias[from];
                        }
                    }
                }
            }
            weights(w[0], w[1], w[2], outWeight);
            if (qkvBias != null) {
                biases(b[0], b[1], b[2], outBias);
            } else {
                bias(false);
            }
            return this;
        }

        /** Output rows of the q and of the k (or v) projection for the head settings so far. */
        private int[] stackedRows() {
            int hd = headDimSet ? headDim : embedDim / numHeads;
            Checks.check(headDimSet || embedDim % numHeads == 0, "embedDim",
                    "a multiple of numHeads = " + numHeads + " (or set headDim before the weights)", embedDim);
            Checks.check(numHeads % kvHeads == 0, "kvHeads", "a divisor of numHeads = " + numHeads, kvHeads);
            Checks.elementCount("in_proj_weight", (long) (numHeads + 2L * kvHeads) * hd, embedDim);
            return new int[]{numHeads * hd, kvHeads * hd};
        }

        private static float[] slice(float[] a, int from, int length) {
            return java.util.Arrays.copyOfRange(a, from, from + length);
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
         * {@code (H·hd + 2·KVH·hd, E)} matrix (each matrix on its own when keyDim or valueDim
         * differ from E), the output weight uniform in {@code ±1/√(H·hd)}, biases zero.
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
            Checks.elementCount("stacked q|k|v weights", qWidth + 2 * kvWidth, Math.max(embedDim, Math.max(keyDim, valueDim)));
            float[] q, k, v, o;
            if (wq == null) {
                Initializer init = new Initializer(seed);
                boolean sameWidths = keyDim == embedDim && valueDim == embedDim;
                float qkvBound = (float) Math.sqrt(6.0 / (embedDim + qWidth + 2 * kvWidth));
                q = init.uniform((int) (qWidth * embedDim), sameWidths ? qkvBound : xavier(embedDim, qWidth));
                k = init.uniform((int) (kvWidth * keyDim), sameWidths ? qkvBound : xavier(keyDim, kvWidth));
                v = init.uniform((int) (kvWidth * valueDim), sameWidths ? qkvBound : xavier(valueDim, kvWidth));
                o = init.uniform((int) (embedDim * qWidth), (float) (1.0 / Math.sqrt(qWidth)));
            } else {
                Checks.length(wq, qWidth * embedDim, "wq", "(H*hd " + qWidth + " x E " + embedDim + ")");
                Checks.length(wk, kvWidth * keyDim, "wk", "(KVH*hd " + kvWidth + " x keyDim " + keyDim + ")");
                Checks.length(wv, kvWidth * valueDim, "wv", "(KVH*hd " + kvWidth + " x valueDim " + valueDim + ")");
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

    private static float xavier(long fanIn, long fanOut) {
        return (float) Math.sqrt(6.0 / (fanIn + fanOut));
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
