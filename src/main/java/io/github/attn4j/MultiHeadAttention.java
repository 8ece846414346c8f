package io.github.attn4j;

import io.github.attn4j.internal.kernel.AttentionKernel;
import io.github.attn4j.internal.kernel.ScoreMask;

import java.util.Arrays;

/**
 * Multi-head attention with PyTorch {@code nn.MultiheadAttention} semantics ({@code batch_first=True})
 * and {@code nn.Linear} weight layouts, so weights port over one to one.
 *
 * <p>{@code forward(query (B, Lq, E), key (B, Lk, keyDim), value (B, Lk, valueDim))} (keyDim and
 * valueDim default to E) computes
 * <pre>
 *   Q = query·Wqᵀ + bq    (B, Lq, H·hd)      K = key·Wkᵀ + bk, V = value·Wvᵀ + bv   (B, Lk, KVH·hd)
 *   per head: Q, K ← RoPE(QK-norm(Q, K))   (each step only when configured)
 *   per head h:  Oₕ = softmax(softcap(scale · Qₕ Kₘᵀ) + mask [, sinkₕ]) Vₘ,  m = h / (H / KVH)
 *   output = [O₀ … O_{H-1}]·Woᵀ + bo   (B, Lq, E)
 * </pre>
 * with {@code scale = 1/√hd} unless {@link MultiHeadAttentionBuilder#scale} sets it, and masks as
 * documented in {@link AttentionMask}. Every entry point, cached or not, runs this one pipeline.
 *
 * <p>A built module is immutable and keeps one packed copy of each weight and nothing else big:
 * when the q, k and v widths line up with the GEMM panels, the three weights are packed as one
 * stacked matrix that self-attention multiplies in one pass and cross-attention reads as column
 * views. It may be shared between threads. One call uses up to
 * {@link MultiHeadAttentionBuilder#threads} threads and returns the same bits whatever that
 * number is.
 */
public final class MultiHeadAttention {
    private final int embedDim;
    private final int numHeads;
    private final int kvHeads;
    private final int headDim;
    private final int keyDim;
    private final int valueDim;
    private final int threads;
    private final AttentionKernel.Scores scores;
    private final AttentionPipeline pipeline;

    MultiHeadAttention(MultiHeadAttentionBuilder b, MultiHeadAttentionBuilder.Weights w, AttentionKernel.Scores scores,
                       HeadTransforms transforms) {
        this.embedDim = b.embedDim;
        this.numHeads = b.numHeads;
        this.kvHeads = b.kvHeads;
        this.headDim = b.headDim;
        this.keyDim = b.keyDim;
        this.valueDim = b.valueDim;
        this.threads = b.threads;
        this.scores = scores;
        this.pipeline = new AttentionPipeline(b, w, transforms);
    }

    /**
     * Starts a module of width {@code embedDim} with {@code numHeads} query heads.
     *
     * @param embedDim the model width E
     * @param numHeads the number of query heads H
     * @return a new builder
     */
    public static MultiHeadAttentionBuilder builder(int embedDim, int numHeads) {
        return new MultiHeadAttentionBuilder(embedDim, numHeads);
    }

    /**
     * Model width E.
     *
     * @return the model width E
     */
    public int embedDim() {
        return embedDim;
    }

    /**
     * Number of query heads H.
     *
     * @return the number of query heads H
     */
    public int numHeads() {
        return numHeads;
    }

    /**
     * Number of key/value heads KVH (equal to H unless GQA/MQA).
     *
     * @return the number of key/value heads KVH
     */
    public int kvHeads() {
        return kvHeads;
    }

    /**
     * Width of one head hd.
     *
     * @return the head width hd
     */
    public int headDim() {
        return headDim;
    }

    /**
     * Width of the keys fed to {@code forward} (PyTorch {@code kdim}); {@code embedDim} unless set.
     *
     * @return the key width
     */
    public int keyDim() {
        return keyDim;
    }

    /**
     * Width of the values fed to {@code forward} (PyTorch {@code vdim}); {@code embedDim} unless set.
     *
     * @return the value width
     */
    public int valueDim() {
        return valueDim;
    }

    /**
     * Factor applied to {@code Q Kᵀ} before masking and softmax.
     *
     * @return the score scale
     */
    public float scale() {
        return scores.scale();
    }

    /**
     * Number of threads one call may use.
     *
     * @return the number of threads one call may use
     */
    public int threads() {
        return threads;
    }

    /**
     * Attention of {@code query (B, Lq, E)} over {@code key, value (B, Lk, E)}; returns {@code (B, Lq, E)}.
     *
     * @param query queries {@code (B, Lq, E)}
     * @param key keys {@code (B, Lk, keyDim)}
     * @param value values {@code (B, Lk, valueDim)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, Lq, E)}
     */
    public Tensor forward(Tensor query, Tensor key, Tensor value, AttentionMask mask) {
        return run(query, key, value, mask, false, null).output();
    }

    /**
     * Like {@link #forward(Tensor, Tensor, Tensor, AttentionMask)}, writing the output into
     * {@code out} instead of a new tensor: same bits, and no result allocated, so steady-state
     * calls of one shape allocate only a few bookkeeping objects. {@code out} may be backed by a
     * {@code float[]}, written in place, or by a writable {@link java.lang.foreign.MemorySegment},
     * which receives the result in one bulk copy from a buffer the calling thread keeps.
     *
     * <p>{@code out} may share storage with {@code query}, {@code key}, {@code value} or a tensor
     * of {@code mask} (for example {@code forward(x, mask, x)}, a residual stream updated in
     * place): every input is read completely before the first element of {@code out} is written.
     * When the call throws, {@code out} is unchanged if the arguments were rejected, and
     * unspecified otherwise.
     *
     * @param query queries {@code (B, Lq, E)}
     * @param key keys {@code (B, Lk, keyDim)}
     * @param value values {@code (B, Lk, valueDim)}
     * @param mask which keys each query attends to
     * @param out receives the output {@code (B, Lq, E)}
     * @return {@code out}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the inputs' shapes disagree, the mask does not fit, or
     *                                  {@code out} is not of shape {@code (B, Lq, E)} or is over
     *                                  a read-only segment
     */
    public Tensor forward(Tensor query, Tensor key, Tensor value, AttentionMask mask, Tensor out) {
        Checks.notNull(out, "out");
        run(query, key, value, mask, false, out);
        return out;
    }

    /**
     * Self-attention: {@code forward(x, x, x, mask)}, with one fused Q/K/V projection.
     *
     * @param x the sequence {@code (B, L, E)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, L, E)}
     */
    public Tensor forward(Tensor x, AttentionMask mask) {
        return run(x, x, x, mask, false, null).output();
    }

    /**
     * Self-attention into {@code out}: {@code forward(x, x, x, mask, out)}, with one fused Q/K/V
     * projection. {@code out} may be {@code x} itself (see
     * {@link #forward(Tensor, Tensor, Tensor, AttentionMask, Tensor)}).
     *
     * @param x the sequence {@code (B, L, E)}
     * @param mask which keys each query attends to
     * @param out receives the output {@code (B, L, E)}
     * @return {@code out}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code x} is not {@code (B, L, E)}, the mask does not
     *                                  fit, or {@code out} is not of shape {@code (B, L, E)} or
     *                                  is over a read-only segment
     */
    public Tensor forward(Tensor x, AttentionMask mask, Tensor out) {
        Checks.notNull(out, "out");
        run(x, x, x, mask, false, out);
        return out;
    }

    /**
     * Like {@link #forward(Tensor, Tensor, Tensor, AttentionMask)}, and also returns the per-head
     * attention weights {@code (B, H, Lq, Lk)} (not averaged over heads).
     *
     * @param query queries {@code (B, Lq, E)}
     * @param key keys {@code (B, Lk, keyDim)}
     * @param value values {@code (B, Lk, valueDim)}
     * @param mask which keys each query attends to
     * @return the output {@code (B, Lq, E)} and the weights {@code (B, H, Lq, Lk)}
     */
    public AttentionOutput forwardWithWeights(Tensor query, Tensor key, Tensor value, AttentionMask mask) {
        return run(query, key, value, mask, true, null);
    }

    /**
     * A new, empty key/value cache for {@code batch} sequences with room for {@code capacity}
     * tokens each before it grows. See {@link #forwardCached}.
     *
     * @param batch the number of sequences
     * @param capacity the tokens per sequence before the cache grows
     * @return a new, empty cache
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
     * @param batch     number of sequences (batch rows)
     * @param capacity  tokens per row before the cache grows
     * @param precision how keys and values are stored
     * @return a new, empty cache owned by this module
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
     * itself). New token {@code t} of row {@code b} sits at position {@code cache.length(b) + t}
     * (for RoPE). Feeding a sequence in chunks gives the same result as
     * {@code forward(x, causal())} within float rounding. Returns {@code (B, T, E)}.
     *
     * @param xNew the new tokens {@code (B, T, E)}
     * @param cache the cache to attend over and append to
     * @return the output {@code (B, T, E)}
     * @throws IllegalArgumentException if the cache was made by another module (or is a standalone
     *                                  cache of other kvHeads or headDim), batch sizes disagree,
     *                                  or keyDim/valueDim differ from embedDim
     */
    public Tensor forwardCached(Tensor xNew, KvCache cache) {
        return cached(xNew, cache, AttentionMask.none(), null);
    }

    /**
     * Like {@link #forwardCached(Tensor, KvCache)}, with {@code mask} joined to the causal one:
     * {@code causal().and(mask)}, e.g. a sliding window or ALiBi. Tensor parts of the mask are
     * read as scores {@code (B, H, T, cached + T)}.
     *
     * @param xNew the new tokens {@code (B, T, E)}
     * @param cache the cache to attend over and append to
     * @param mask the mask joined to the causal one
     * @return the output {@code (B, T, E)}
     */
    public Tensor forwardCached(Tensor xNew, KvCache cache, AttentionMask mask) {
        Checks.notNull(mask, "mask");
        return cached(xNew, cache, mask, null);
    }

    /**
     * Ragged decoding: like {@link #forwardCached(Tensor, KvCache, AttentionMask)}, but row
     * {@code b} takes only its first {@code tokens[b]} of the T tokens of {@code xNew} (0: the
     * row sits out, its cache unchanged). Output rows {@code t >= tokens[b]} are 0. Tensor parts
     * of the mask are read as scores {@code (B, H, T, max_b(cache.length(b) + tokens[b]))}.
     *
     * @param xNew the new tokens {@code (B, T, E)}
     * @param cache the cache to attend over and append to
     * @param mask the mask joined to the causal one
     * @param tokens the number of new tokens each row takes
     * @return the output {@code (B, T, E)}
     * @throws IllegalArgumentException also if {@code tokens} does not have B entries in {@code [0, T]}
     */
    public Tensor forwardCached(Tensor xNew, KvCache cache, AttentionMask mask, int[] tokens) {
        Checks.notNull(mask, "mask");
        Checks.notNull(tokens, "tokens");
        return cached(xNew, cache, mask, tokens);
    }

    /** The uncached entry points; {@code target} (checked here) receives the output, or null for a new tensor. */
    private AttentionOutput run(Tensor query, Tensor key, Tensor value, AttentionMask mask, boolean withWeights,
                                Tensor target) {
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
        if (target != null) {
            Outputs.check(target, "(B, Lq, E)", batch, lq, embedDim);
        }
        int weightsSize = withWeights ? Checks.elementCount("weights (B, H, Lq, Lk)", batch, numHeads, lq, lk) : 0;
        float[] weights = withWeights ? new float[weightsSize] : null;
        ScoreMask scoreMask = mask.toScoreMask(batch, numHeads, lq, lk);
        // Weights are one (B, H, Lq, Lk) array, written by a call over the whole batch.
        boolean chunkable = weights == null && !(target != null && mask.readsArrayOf(target));
        Tensor output = pipeline.run(query, key, value, null, target, chunkable, (qh, kh, vh, attended, b0, th) ->
                AttentionKernel.forward(qh, kh, vh, attended, scoreMask, b0, scores, weights, th));
        return new AttentionOutput(output, weights == null ? null : Tensor.of(weights, batch, numHeads, lq, lk));
    }

    /** forwardCached with {@code tokens} null meaning every row takes all T tokens. */
    private Tensor cached(Tensor xNew, KvCache cache, AttentionMask mask, int[] tokens) {
        Checks.rank(xNew, 3, "xNew", "(B, T, E)");
        Checks.notNull(cache, "cache");
        checkCache(cache);
        Checks.dim(xNew, 0, cache.batch(), "xNew", "batch B of the cache");
        Checks.dim(xNew, 2, embedDim, "xNew", "embedDim E");
        if (!(keyDim == embedDim && valueDim == embedDim)) {
            throw Checks.fail("keyDim/valueDim",
                    "equal to embedDim = " + embedDim + " for cached self-attention", keyDim + "/" + valueDim);
        }
        int batch = xNew.dim(0), t = xNew.dim(1);
        int[] appended = tokens == null ? null : tokens.clone();
        cache.checkTokens(appended, t);
        cache.checkRoom(t, appended);
        int[] rowQueries = appended != null ? appended : new int[batch];
        if (appended == null) {
            Arrays.fill(rowQueries, t);
        }
        int[] start = cache.lengths();
        int[] rowKeys = new int[batch];
        Arrays.setAll(rowKeys, b -> start[b] + rowQueries[b]);
        int maxKeys = Arrays.stream(rowKeys).max().orElse(0);
        AttentionMask joined = AttentionMask.causal().and(mask);
        joined.checkApplicable(batch, numHeads, t, maxKeys);
        Tensor output = pipeline.run(xNew, xNew, xNew, start, null, false, (qh, kh, vh, attended, b0, th) -> {
            // The kernel takes the query heads that share a key/value head as rows of one tile
            // (GQA), so one pass over each group's cached keys and values serves all of them.
            cache.append(kh, vh, appended, threads);
            AttentionKernel.forward(qh, cache.panels(), kvHeads, attended,
                    joined.toScoreMask(batch, t, maxKeys, rowKeys, rowQueries), scores, threads);
        });
        // Left-out queries attend nothing; their rows are 0, not the output bias.
        float[] y = output.data();
        for (int b = 0; b < batch && appended != null; b++) {
            Arrays.fill(y, (b * t + rowQueries[b]) * embedDim, (b + 1) * t * embedDim, 0f);
        }
        return output;
    }

    /** A cache this module made, or a standalone one ({@link KvCache#create}) of this module's head shape. */
    private void checkCache(KvCache cache) {
        if (cache.owner() != null) {
            Checks.check(cache.owner() == this, "cache", "a cache made by this module's newKvCache or KvCache.create",
                    "a cache of another module");
        } else {
            if (!(cache.kvHeads() == kvHeads && cache.headDim() == headDim)) {
                throw Checks.fail("cache",
                        "kvHeads = " + kvHeads + " and headDim = " + headDim,
                        "kvHeads = " + cache.kvHeads() + " and headDim = " + cache.headDim());
            }
        }
    }
}
