package io.github.attn4j;

import io.github.attn4j.internal.kernel.AttentionKernel;
import io.github.attn4j.internal.kernel.PackedMatrix;
import io.github.attn4j.internal.kernel.WeightRows;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Configures and validates a {@link MultiHeadAttention}; start one with
 * {@link MultiHeadAttention#builder(int, int)}. Settings are checked when given where they can
 * be on their own, and together at {@link #build()}. Arrays and segments are read at
 * {@link #build()}: the module copies (packs) what it needs and keeps no reference to them.
 */
public final class MultiHeadAttentionBuilder {
    final int embedDim;
    final int numHeads;
    int headDim;
    private boolean headDimSet;
    int kvHeads;
    int keyDim;
    int valueDim;
    int threads = Runtime.getRuntime().availableProcessors();
    private boolean bias = true;
    private GivenWeights given = GivenWeights.NONE;
    /** How the module stores its weights; null: as they were given (F32 for float arrays). */
    private Precision weightPrecision;
    private float[] bq, bk, bv, bo;
    private long seed;
    private float scale = Float.NaN;
    private float softcap;
    private float[] sinks;
    private RotaryEmbedding rope;
    private float[] qNormWeight, kNormWeight;
    private float normEps;

    /**
     * The resolved projection weights and biases handed to the module, which reads them once and
     * stores the weights as {@code format}.
     */
    record Weights(WeightRows wq, WeightRows wk, WeightRows wv, WeightRows wo, float[] bq, float[] bk, float[] bv,
                   float[] bo, PackedMatrix.Format format) {
    }

    MultiHeadAttentionBuilder(int embedDim, int numHeads) {
        this.embedDim = Checks.positive(embedDim, "embedDim");
        this.numHeads = Checks.positive(numHeads, "numHeads");
        this.kvHeads = numHeads;
        this.keyDim = embedDim;
        this.valueDim = embedDim;
    }

    /**
     * Width of the keys given to {@code forward} (PyTorch {@code kdim}); default {@code embedDim}. wk becomes {@code (KVH·hd, keyDim)}.
     *
     * @param keyDim the width of the keys
     * @return this builder
     */
    public MultiHeadAttentionBuilder keyDim(int keyDim) {
        this.keyDim = Checks.positive(keyDim, "keyDim");
        return this;
    }

    /**
     * Width of the values given to {@code forward} (PyTorch {@code vdim}); default {@code embedDim}. wv becomes {@code (KVH·hd, valueDim)}.
     *
     * @param valueDim the width of the values
     * @return this builder
     */
    public MultiHeadAttentionBuilder valueDim(int valueDim) {
        this.valueDim = Checks.positive(valueDim, "valueDim");
        return this;
    }

    /**
     * Softmax scale applied to {@code Q Kᵀ}; default {@code 1/√headDim}. Must be finite.
     *
     * @param scale the softmax scale
     * @return this builder
     */
    public MultiHeadAttentionBuilder scale(float scale) {
        Checks.check(Float.isFinite(scale), "scale", "a finite value", scale);
        this.scale = scale;
        return this;
    }

    /**
     * Width of each head; default {@code embedDim / numHeads} (which must then divide evenly).
     *
     * @param headDim the width of each head
     * @return this builder
     */
    public MultiHeadAttentionBuilder headDim(int headDim) {
        this.headDim = Checks.positive(headDim, "headDim");
        this.headDimSet = true;
        return this;
    }

    /**
     * Number of key/value heads; default {@code numHeads}. Fewer gives GQA (1 gives MQA); must divide {@code numHeads}.
     *
     * @param numKvHeads the number of key/value heads
     * @return this builder
     */
    public MultiHeadAttentionBuilder kvHeads(int numKvHeads) {
        this.kvHeads = Checks.positive(numKvHeads, "kvHeads");
        return this;
    }

    /**
     * Rotary position embeddings applied to every query and key head after the projection (and
     * after QK-norm, when set). {@code forward} puts query {@code t} and key {@code t} at position
     * {@code t}; {@code forwardCached} puts new token {@code t} of row {@code b} at
     * {@code cache.length(b) + t}. Its rotary dimension must fit the head width (checked at build).
     *
     * @param rope the rotary embedding
     * @return this builder
     */
    public MultiHeadAttentionBuilder rotary(RotaryEmbedding rope) {
        this.rope = Checks.notNull(rope, "rope");
        return this;
    }

    /**
     * QK-norm (Qwen 3, Gemma 3, OLMo 2): each query head is replaced by
     * {@code x / sqrt(mean(x²) + eps) * qWeight}, each key head likewise with {@code kWeight},
     * after the projection and before RoPE. Both weights have one entry per head channel
     * ({@code headDim}, checked at build) and are copied at build; {@code eps} must be finite and
     * non-negative (with 0, an all-zero head gives NaN, as in PyTorch).
     *
     * @param qWeight the query norm weight {@code (headDim)}
     * @param kWeight the key norm weight {@code (headDim)}
     * @param eps the epsilon added to the mean square
     * @return this builder
     */
    public MultiHeadAttentionBuilder qkNorm(float[] qWeight, float[] kWeight, float eps) {
        this.qNormWeight = Checks.notNull(qWeight, "qWeight");
        this.kNormWeight = Checks.notNull(kWeight, "kWeight");
        Checks.check(Float.isFinite(eps) && eps >= 0, "eps", "a finite non-negative value", eps);
        this.normEps = eps;
        return this;
    }

    /**
     * Soft-caps the scaled scores, {@code s -> cap · tanh(s / cap)}, before masks and biases
     * (Gemma 2, Grok). Must be finite and positive; default: no soft-cap.
     *
     * @param cap the soft-cap
     * @return this builder
     */
    public MultiHeadAttentionBuilder softcap(float cap) {
        Checks.check(Float.isFinite(cap) && cap > 0, "softcap", "a finite positive value", cap);
        this.softcap = cap;
        return this;
    }

    /**
     * Attention sinks (gpt-oss): one logit per query head whose {@code exp} joins that head's
     * softmax denominator with no value, so a query may attend to nothing. Length {@code numHeads}
     * and finite values, checked and copied at build; default: no sinks.
     *
     * @param logits one sink logit per query head
     * @return this builder
     */
    public MultiHeadAttentionBuilder sinks(float[] logits) {
        this.sinks = Checks.notNull(logits, "sinks");
        return this;
    }

    /**
     * Whether the projections have biases; default true.
     *
     * @param bias whether the projections have biases
     * @return this builder
     */
    public MultiHeadAttentionBuilder bias(boolean bias) {
        this.bias = bias;
        return this;
    }

    /**
     * Projection weights in {@code nn.Linear} layout {@code (out_features, in_features)},
     * row-major: wq {@code (H·hd, E)}, wk and wv {@code (KVH·hd, E)}, wo {@code (E, H·hd)}.
     * Read at {@link #build()}; stored as float32 unless {@link #weightPrecision} says otherwise.
     *
     * @param wq the query weight {@code (H·hd, E)}
     * @param wk the key weight {@code (KVH·hd, keyDim)}
     * @param wv the value weight {@code (KVH·hd, valueDim)}
     * @param wo the output weight {@code (E, H·hd)}
     * @return this builder
     */
    public MultiHeadAttentionBuilder weights(float[] wq, float[] wk, float[] wv, float[] wo) {
        this.given = GivenWeights.arrays(wq, wk, wv, wo);
        return this;
    }

    /**
     * Projection weights as stored in a model file: each segment holds the weight in
     * {@code nn.Linear} layout, row-major as for {@link #weights(float[], float[], float[], float[])},
     * as little-endian values of {@code format}: 2 bytes per element for {@link Precision#BF16}
     * and {@link Precision#F16}, 4 for {@link Precision#F32}. That is the byte layout of a
     * safetensors tensor of dtype BF16, F16 or F32 and of a GGUF tensor of type BF16, F16 or F32,
     * so a segment sliced from a memory-mapped file ({@code FileChannel.map} and
     * {@code MemorySegment.asSlice}) is handed over as it is; stacked weights (PyTorch's
     * {@code in_proj_weight}) are slices of one segment. Heap, native and mapped segments with any
     * alignment are accepted.
     *
     * <p>The segments are read once, at {@link #build()} (they must be alive then, and are not
     * retained), and packed straight into the module's weight panels, stored as
     * {@link #weightPrecision} if set, otherwise as {@code format}: 16-bit weights are kept as
     * they are (bit for bit, half the bytes of float32) and no float32 copy of a whole weight is
     * ever made. With F32 weights, or a different {@link #weightPrecision}, each element is
     * widened exactly and rounded once to the stored precision.
     *
     * @param format the element type of the segments: F32, F16 or BF16
     * @param wq     the query weight {@code (H·hd, E)}
     * @param wk     the key weight {@code (KVH·hd, keyDim)}
     * @param wv     the value weight {@code (KVH·hd, valueDim)}
     * @param wo     the output weight {@code (E, H·hd)}
     * @return this builder
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code format} is {@link Precision#INT8}; segment sizes
     *                                  are checked at {@link #build()}
     */
    public MultiHeadAttentionBuilder weights(Precision format, MemorySegment wq, MemorySegment wk, MemorySegment wv,
                                             MemorySegment wo) {
        this.given = GivenWeights.segments(weightFormat(format, "format"), wq, wk, wv, wo);
        return this;
    }

    /**
     * How the module stores its four projection weights: {@link Precision#F32},
     * {@link Precision#BF16} or {@link Precision#F16}. Default: the precision they are given in
     * (F32 for float arrays and the seeded initialization, the segments' format for
     * {@link #weights(Precision, MemorySegment, MemorySegment, MemorySegment, MemorySegment)}).
     *
     * <p>A 16-bit precision rounds each weight once, at {@link #build()}, to nearest (ties to
     * even), and keeps half the bytes. Arithmetic stays float32: the GEMMs widen the stored
     * values exactly as they read them, so the module gives the same bits as an F32 module built
     * from the rounded weights, on every thread count and kernel path. Biases, QK-norm weights
     * and sinks stay float32.
     *
     * <p>A finite weight that would round to an infinity ({@code |x| >= 65520} for F16,
     * {@code |x| >= 3.3961776e38} for BF16) is <b>rejected</b>: {@link #build()} throws an
     * {@link IllegalArgumentException} naming the weight ({@code wq}, {@code wk}, {@code wv} or
     * {@code wo}), the element's row and column and its value, rather than storing an infinity.
     * NaN and the infinities are kept.
     *
     * @param precision F32, BF16 or F16
     * @return this builder
     * @throws NullPointerException     if {@code precision} is null
     * @throws IllegalArgumentException if {@code precision} is {@link Precision#INT8}
     */
    public MultiHeadAttentionBuilder weightPrecision(Precision precision) {
        weightFormat(precision, "precision");
        this.weightPrecision = precision;
        return this;
    }

    /** {@code precision} checked as a weight precision (F32, F16 or BF16), as the kernels' format. */
    private static PackedMatrix.Format weightFormat(Precision precision, String name) {
        Checks.notNull(precision, name);
        return switch (precision) {
            case F32 -> PackedMatrix.Format.F32;
            case F16 -> PackedMatrix.Format.F16;
            case BF16 -> PackedMatrix.Format.BF16;
            case INT8 -> throw new IllegalArgumentException(name
                    + ": expected F32, BF16 or F16 for weights (INT8 is a KvCache precision only), got INT8");
        };
    }

    /**
     * Weights in the state-dict layout of {@code nn.MultiheadAttention}: {@code in_proj_weight}
     * {@code (H·hd + 2·KVH·hd, E)} with the q, k and v rows stacked in that order ({@code (3E, E)}
     * for plain MHA), {@code in_proj_bias} likewise stacked, {@code out_proj.weight}
     * {@code (E, H·hd)} and {@code out_proj.bias} {@code (E)}. Biases may be null together (no
     * bias). Only for {@code keyDim == valueDim == embedDim}; otherwise use {@link #weights}.
     *
     * @param inProjWeight the stacked q, k, v weights {@code (H·hd + 2·KVH·hd, E)}
     * @param inProjBias the stacked q, k, v biases, or null
     * @param outProjWeight the output weight {@code (E, H·hd)}
     * @param outProjBias the output bias {@code (E)}, or null
     * @return this builder
     */
    public MultiHeadAttentionBuilder pytorchWeights(float[] inProjWeight, float[] inProjBias, float[] outProjWeight,
                                                    float[] outProjBias) {
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
     *
     * @param qkvWeight the fused QKV weight {@code (3·H·hd, E)}
     * @param qkvBias the fused QKV bias {@code (3·H·hd)}, or null
     * @param outWeight the output weight {@code (E, H·hd)}
     * @param outBias the output bias {@code (E)}, or null
     * @return this builder
     */
    public MultiHeadAttentionBuilder interleavedQkvWeights(float[] qkvWeight, float[] qkvBias, float[] outWeight,
                                                           float[] outBias) {
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
        return Arrays.copyOfRange(a, from, from + length);
    }

    /**
     * Projection biases: bq {@code (H·hd)}, bk and bv {@code (KVH·hd)}, bo {@code (E)}. Each may be
     * null on its own: that projection has no bias (Qwen 2, for instance, has q/k/v biases and no
     * output bias). Read at {@link #build()}.
     *
     * @param bq the query bias {@code (H·hd)}, or null
     * @param bk the key bias {@code (KVH·hd)}, or null
     * @param bv the value bias {@code (KVH·hd)}, or null
     * @param bo the output bias {@code (E)}, or null
     * @return this builder
     */
    public MultiHeadAttentionBuilder biases(float[] bq, float[] bk, float[] bv, float[] bo) {
        this.bq = bq;
        this.bk = bk;
        this.bv = bv;
        this.bo = bo;
        return this;
    }

    /**
     * Seed of the random initialization used when no weights are given (default 0). It
     * follows PyTorch's bounds: Q/K/V weights Xavier-uniform over the stacked
     * {@code (H·hd + 2·KVH·hd, E)} matrix (each matrix on its own when keyDim or valueDim
     * differ from E), the output weight uniform in {@code ±1/√(H·hd)}, biases zero.
     *
     * @param seed the seed of the random initialization
     * @return this builder
     */
    public MultiHeadAttentionBuilder seed(long seed) {
        this.seed = seed;
        return this;
    }

    /**
     * Threads one forward call may use (default: available processors). Work is split into
     * independent blocks of rows and (head, query tile) pairs, each reduced in a fixed order,
     * so the output is bit-identical for every thread count.
     *
     * @param threads the number of threads one call may use
     * @return this builder
     */
    public MultiHeadAttentionBuilder threads(int threads) {
        this.threads = Checks.positive(threads, "threads");
        return this;
    }

    /**
     * Validates the configuration and builds the module.
     *
     * @return the module
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
        HeadTransforms transforms = transforms();
        float[] sinkCopy = null;
        if (sinks != null) {
            Checks.length(sinks, numHeads, "sinks", "(one logit per query head, H = " + numHeads + ")");
            sinkCopy = sinks.clone();
            for (int h = 0; h < numHeads; h++) {
                Checks.check(Float.isFinite(sinkCopy[h]), "sinks[" + h + "]", "a finite value", sinkCopy[h]);
            }
        }
        float resolvedScale = Float.isNaN(scale) ? (float) (1.0 / Math.sqrt(headDim)) : scale;
        return new MultiHeadAttention(this, weights(qWidth, kvWidth),
                new AttentionKernel.Scores(resolvedScale, softcap, sinkCopy), transforms);
    }

    /** QK-norm then RoPE, as configured, checked against the head width. */
    private HeadTransforms transforms() {
        HeadTransforms t = HeadTransforms.none();
        if (qNormWeight != null) {
            t = t.withQkNorm(qNormWeight, kNormWeight, normEps);
        }
        if (rope != null) {
            t = t.withRotary(rope);
        }
        t.checkHeadDim(headDim);
        return t;
    }

    /** The given weights and biases, checked, or the seeded initialization. */
    private Weights weights(long qWidth, long kvWidth) {
        WeightRows[] w = given.resolve((int) qWidth, (int) kvWidth, embedDim, keyDim, valueDim, seed);
        Checks.check(bias || (bq == null && bk == null && bv == null && bo == null), "biases",
                "no biases when bias(false) is set", "a bias array");
        checkBias(bq, qWidth, "bq", "(H*hd)");
        checkBias(bk, kvWidth, "bk", "(KVH*hd)");
        checkBias(bv, kvWidth, "bv", "(KVH*hd)");
        checkBias(bo, embedDim, "bo", "(E)");
        PackedMatrix.Format stored = weightPrecision == null ? given.format() : weightFormat(weightPrecision, "precision");
        return new Weights(w[0], w[1], w[2], w[3], bq, bk, bv, bo, stored);
    }

    private static void checkBias(float[] b, long length, String name, String layout) {
        if (b != null) {
            Checks.length(b, length, name, layout + " or null for no bias");
        }
    }
}
