package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.RotaryEmbedding;
import io.github.attn4j.Tensor;

import java.util.Arrays;
import java.util.Objects;

import static io.github.attn4j.reference.ReferenceTensors.checkCount;
import static io.github.attn4j.reference.ReferenceTensors.checkSoftcap;
import static io.github.attn4j.reference.ReferenceTensors.finite;
import static io.github.attn4j.reference.ReferenceTensors.heads;
import static io.github.attn4j.reference.ReferenceTensors.length;
import static io.github.attn4j.reference.ReferenceTensors.linear;
import static io.github.attn4j.reference.ReferenceTensors.mergeHeads;
import static io.github.attn4j.reference.ReferenceTensors.positive;
import static io.github.attn4j.reference.ReferenceTensors.rank3;
import static io.github.attn4j.reference.ReferenceTensors.rank4;
import static io.github.attn4j.reference.ReferenceTensors.rows;
import static io.github.attn4j.reference.ReferenceTensors.splitHeads;
import static io.github.attn4j.reference.ReferenceTensors.toTensor;
import static io.github.attn4j.reference.ReferenceTensors.toTensor4;

/**
 * The scalar oracle: multi-head attention written as the textbook steps, one loop nest per step,
 * in double precision. It shares no code with the kernels (it reads tensors, masks and the RoPE
 * configuration through the public API only and interprets every mask part itself), so the
 * property tests that compare the two check the kernels against an independent implementation.
 *
 * <p>Steps of {@link #multiHead}: project (y = x·Wᵀ + b), split heads, QK-norm, RoPE, scaled dot
 * product ({@link #scaledDotProduct}: scale, soft-cap, biases and ALiBi, mask, softmax with sinks,
 * weight values), merge heads, project.
 */
public final class ReferenceAttention {
    private ReferenceAttention() {
    }

    /**
     * Weights in {@code nn.Linear} layout (row-major {@code (out, in)}) and shape of a
     * multi-head attention layer: wq {@code (H·hd, E)}, wk {@code (KVH·hd, keyDim)}, wv
     * {@code (KVH·hd, valueDim)}, wo {@code (E, H·hd)}. Each bias may be null on its own,
     * meaning that projection has no bias (the same as zeros). Arrays are used as given.
     *
     * @param embedDim model width E
     * @param numHeads number of query heads H
     * @param kvHeads  number of key/value heads KVH, a divisor of H
     * @param headDim  head width hd
     * @param keyDim   width of the keys fed in
     * @param valueDim width of the values fed in
     * @param scale    factor applied to {@code Q Kᵀ}
     * @param wq       query projection {@code (H·hd, E)}
     * @param wk       key projection {@code (KVH·hd, keyDim)}
     * @param wv       value projection {@code (KVH·hd, valueDim)}
     * @param wo       output projection {@code (E, H·hd)}
     * @param bq       query bias {@code (H·hd)}, or null
     * @param bk       key bias {@code (KVH·hd)}, or null
     * @param bv       value bias {@code (KVH·hd)}, or null
     * @param bo       output bias {@code (E)}, or null
     */
    public record Parameters(int embedDim, int numHeads, int kvHeads, int headDim, int keyDim, int valueDim, float scale,
                             float[] wq, float[] wk, float[] wv, float[] wo,
                             float[] bq, float[] bk, float[] bv, float[] bo) {
        /**
         * Parameters whose keys and values have width {@code embedDim}.
         *
         * @param embedDim model width E
         * @param numHeads number of query heads H
         * @param kvHeads  number of key/value heads KVH, a divisor of H
         * @param headDim  head width hd
         * @param scale    factor applied to {@code Q Kᵀ}
         * @param wq       query projection {@code (H·hd, E)}
         * @param wk       key projection {@code (KVH·hd, E)}
         * @param wv       value projection {@code (KVH·hd, E)}
         * @param wo       output projection {@code (E, H·hd)}
         * @param bq       query bias {@code (H·hd)}, or null
         * @param bk       key bias {@code (KVH·hd)}, or null
         * @param bv       value bias {@code (KVH·hd)}, or null
         * @param bo       output bias {@code (E)}, or null
         */
        public Parameters(int embedDim, int numHeads, int kvHeads, int headDim, float scale,
                          float[] wq, float[] wk, float[] wv, float[] wo,
                          float[] bq, float[] bk, float[] bv, float[] bo) {
            this(embedDim, numHeads, kvHeads, headDim, embedDim, embedDim, scale, wq, wk, wv, wo, bq, bk, bv, bo);
        }

        /**
         * Checks the shape and the array lengths.
         *
         * @throws IllegalArgumentException if a size is not positive, kvHeads does not divide
         *                                  numHeads, or an array has the wrong length
         * @throws NullPointerException     if a weight is null
         */
        public Parameters {
            positive(embedDim, "embedDim");
            positive(keyDim, "keyDim");
            positive(valueDim, "valueDim");
            positive(numHeads, "numHeads");
            positive(kvHeads, "kvHeads");
            positive(headDim, "headDim");
            if (numHeads % kvHeads != 0) {
                throw new IllegalArgumentException("kvHeads: expected a divisor of numHeads = " + numHeads + ", got " + kvHeads);
            }
            long q = (long) numHeads * headDim, kv = (long) kvHeads * headDim;
            length(wq, q * embedDim, "wq");
            length(wk, kv * keyDim, "wk");
            length(wv, kv * valueDim, "wv");
            length(wo, embedDim * q, "wo");
            if (bq != null) {
                length(bq, q, "bq");
            }
            if (bk != null) {
                length(bk, kv, "bk");
            }
            if (bv != null) {
                length(bv, kv, "bv");
            }
            if (bo != null) {
                length(bo, embedDim, "bo");
            }
        }
    }

    /**
     * How a score is formed before the mask: {@code s = scale · q·k}, then, if {@code softcap > 0},
     * {@code s = softcap · tanh(s / softcap)}. {@code sinks} (null = none, else one finite logit
     * per query head) join each row's softmax denominator as {@code exp(sinks[h])}, with no value.
     * The array is used as given.
     *
     * @param scale the factor applied to {@code q·k}
     * @param softcap the soft-cap, or 0 for none
     * @param sinks one logit per query head, or null
     */
    public record ScoreOptions(float scale, float softcap, float[] sinks) {
        /** Checks the soft-cap and the sinks. */
        public ScoreOptions {
            checkSoftcap(softcap, "softcap");
            finite(sinks, "sinks");
        }

        /**
         * Only a scale: no soft-cap, no sinks.
         *
         * @param scale the factor applied to {@code q·k}
         * @return options with that scale only
         */
        public static ScoreOptions scaled(float scale) {
            return new ScoreOptions(scale, 0f, null);
        }
    }

    /**
     * The per-head transforms of a decoder layer; every field may be null or 0, meaning absent.
     * {@code qNormWeight} and {@code kNormWeight} (each {@code hd} long) turn on RMSNorm of the
     * query and key heads with {@code normEps}; {@code rope} rotates both after the norm;
     * {@code softcap} and {@code sinks} are as in {@link ScoreOptions}. Arrays are used as given.
     *
     * @param rope the rotary embedding, or null
     * @param qNormWeight the query RMSNorm weight, or null
     * @param kNormWeight the key RMSNorm weight, or null
     * @param normEps the RMSNorm epsilon
     * @param softcap the soft-cap, or 0 for none
     * @param sinks one logit per query head, or null
     */
    public record DecoderOptions(RotaryEmbedding rope, float[] qNormWeight, float[] kNormWeight, float normEps,
                                 float softcap, float[] sinks) {
        /** Checks normEps, the soft-cap and the sinks. */
        public DecoderOptions {
            if (!(Float.isFinite(normEps) && normEps >= 0)) {
                throw new IllegalArgumentException("normEps: expected a finite value >= 0, got " + normEps);
            }
            checkSoftcap(softcap, "softcap");
            finite(sinks, "sinks");
        }

        /**
         * No decoder transform: plain multi-head attention.
         *
         * @return options with every transform absent
         */
        public static DecoderOptions none() {
            return new DecoderOptions(null, null, null, 0f, 0f, null);
        }
    }

    /**
     * Multi-head attention of {@code query (B, Lq, E)} over {@code key (B, Lk, keyDim)} and
     * {@code value (B, Lk, valueDim)}: output {@code (B, Lq, E)} and per-head weights
     * {@code (B, H, Lq, Lk)}.
     *
     * @param query queries {@code (B, Lq, E)}
     * @param key   keys {@code (B, Lk, keyDim)}
     * @param value values {@code (B, Lk, valueDim)}
     * @param mask  which keys each query attends to, see {@link AttentionMask}
     * @param p     the layer's shape and weights
     * @return the output {@code (B, Lq, E)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput multiHead(Tensor query, Tensor key, Tensor value, AttentionMask mask, Parameters p) {
        return multiHead(query, key, value, mask, p, DecoderOptions.none());
    }

    /**
     * Multi-head attention with the decoder transforms of {@code o}: RoPE puts query {@code t} at
     * position {@code t} ({@code 0..Lq-1}) and key {@code t} at position {@code t} ({@code 0..Lk-1}).
     *
     * @param query queries {@code (B, Lq, E)}
     * @param key keys {@code (B, Lk, keyDim)}
     * @param value values {@code (B, Lk, valueDim)}
     * @param mask which keys each query attends to, see {@link AttentionMask}
     * @param p the layer's shape and weights
     * @param o the decoder transforms
     * @return the output {@code (B, Lq, E)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput multiHead(Tensor query, Tensor key, Tensor value, AttentionMask mask, Parameters p,
                                            DecoderOptions o) {
        Objects.requireNonNull(p, "p must not be null");
        Objects.requireNonNull(o, "o must not be null");
        int e = p.embedDim();
        int batch = rank3(query, "query", e), lq = query.dim(1);
        rank3(key, "key", p.keyDim());
        rank3(value, "value", p.valueDim());
        int lk = key.dim(1);
        if (key.dim(0) != batch) {
            throw new IllegalArgumentException("key: expected batch " + batch + " (from query), got shape "
                    + Arrays.toString(key.shape()));
        }
        if (value.dim(0) != batch || value.dim(1) != lk) {
            throw new IllegalArgumentException("value: expected batch " + batch + " and length " + lk
                    + " (from query and key), got shape " + Arrays.toString(value.shape()));
        }
        Objects.requireNonNull(mask, "mask must not be null");
        int h = p.numHeads(), kvh = p.kvHeads(), hd = p.headDim();
        if (o.qNormWeight() != null) {
            length(o.qNormWeight(), hd, "o.qNormWeight");
        }
        if (o.kNormWeight() != null) {
            length(o.kNormWeight(), hd, "o.kNormWeight");
        }
        if (o.rope() != null) {
            ReferenceDecoder.checkRope(o.rope(), hd, "o.rope");
        }
        if (o.sinks() != null) {
            length(o.sinks(), h, "o.sinks");
        }
        checkCount("weights (B, H, Lq, Lk)", batch, h, lq, lk);
        checkCount("projected query (B*Lq, H*hd)", batch, lq, h, hd);
        checkCount("projected key/value (B*Lk, KVH*hd)", batch, lk, kvh, hd);

        // 1. Project.
        double[][] q = linear(rows(query), p.wq(), p.bq(), h * hd);
        double[][] k = linear(rows(key), p.wk(), p.bk(), kvh * hd);
        double[][] v = linear(rows(value), p.wv(), p.bv(), kvh * hd);
        // 2. Split heads: (B*L, heads*hd) -> [b][head][t][c].
        double[][][][] qh = splitHeads(q, batch, lq, h, hd);
        double[][][][] kh = splitHeads(k, batch, lk, kvh, hd);
        double[][][][] vh = splitHeads(v, batch, lk, kvh, hd);
        // 3. QK-norm: RMSNorm of every head vector of q and of k.
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h && o.qNormWeight() != null; head++) {
                for (int t = 0; t < lq; t++) {
                    qh[b][head][t] = ReferenceDecoder.rmsNorm(qh[b][head][t], o.qNormWeight(), o.normEps());
                }
            }
            for (int head = 0; head < kvh && o.kNormWeight() != null; head++) {
                for (int t = 0; t < lk; t++) {
                    kh[b][head][t] = ReferenceDecoder.rmsNorm(kh[b][head][t], o.kNormWeight(), o.normEps());
                }
            }
        }
        // 4. RoPE: token t at position t.
        for (int b = 0; b < batch && o.rope() != null; b++) {
            for (int head = 0; head < h; head++) {
                for (int t = 0; t < lq; t++) {
                    qh[b][head][t] = ReferenceDecoder.rotate(qh[b][head][t], t, o.rope());
                }
            }
            for (int head = 0; head < kvh; head++) {
                for (int t = 0; t < lk; t++) {
                    kh[b][head][t] = ReferenceDecoder.rotate(kh[b][head][t], t, o.rope());
                }
            }
        }
        // 5.-10. Scale, soft-cap, biases and ALiBi, mask, softmax with sinks, weight values.
        double[][][][] weights = new double[batch][h][][];
        ScoreOptions scoring = new ScoreOptions(p.scale(), o.softcap(), o.sinks());
        double[][][][] heads = ReferenceScores.attend(qh, kh, vh, hd, mask, scoring, weights);
        // 11. Merge heads: [b][h][t][c] -> (B*Lq, H*hd).
        double[][] merged = mergeHeads(heads, batch, h, lq, hd);
        // 12. Output projection.
        double[][] out = linear(merged, p.wo(), p.bo(), e);
        return new AttentionOutput(toTensor(out, batch, lq, e), toTensor4(weights, batch, h, lq, lk));
    }

    /**
     * Scaled dot-product attention of {@code q (B, H, Lq, d)} over {@code k (B, KVH, Lk, d)},
     * {@code v (B, KVH, Lk, dv)}, query head {@code h} reading key/value head
     * {@code h / (H / KVH)}: output {@code (B, H, Lq, dv)} and weights {@code (B, H, Lq, Lk)}.
     *
     * @param q     queries {@code (B, H, Lq, d)}
     * @param k     keys {@code (B, KVH, Lk, d)}
     * @param v     values {@code (B, KVH, Lk, dv)}
     * @param mask  which keys each query attends to, see {@link AttentionMask}
     * @param scale factor applied to {@code Q Kᵀ}
     * @return the output {@code (B, H, Lq, dv)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput scaledDotProduct(Tensor q, Tensor k, Tensor v, AttentionMask mask, float scale) {
        return scaledDotProduct(q, k, v, mask, ScoreOptions.scaled(scale));
    }

    /**
     * Scaled dot-product attention with soft-cap and sinks: the weights are
     * {@code exp(s_j) / (Σ_k exp(s_k) + exp(sink_h))}, so a row with a sink sums to less than 1;
     * a row whose keys are all masked gives zero weights and output, sink or not.
     *
     * @param q queries {@code (B, H, Lq, d)}
     * @param k keys {@code (B, KVH, Lk, d)}
     * @param v values {@code (B, KVH, Lk, dv)}
     * @param mask which keys each query attends to, see {@link AttentionMask}
     * @param options how scores are formed
     * @return the output {@code (B, H, Lq, dv)} and the weights {@code (B, H, Lq, Lk)}
     */
    public static AttentionOutput scaledDotProduct(Tensor q, Tensor k, Tensor v, AttentionMask mask, ScoreOptions options) {
        rank4(q, "q");
        rank4(k, "k");
        rank4(v, "v");
        Objects.requireNonNull(mask, "mask must not be null");
        Objects.requireNonNull(options, "options must not be null");
        int batch = q.dim(0), h = q.dim(1), lq = q.dim(2), d = q.dim(3);
        int kvh = k.dim(1), lk = k.dim(2), dv = v.dim(3);
        if (k.dim(0) != batch || k.dim(3) != d) {
            throw new IllegalArgumentException("k: expected (" + batch + ", KVH, Lk, " + d + ") (batch and width of q), got "
                    + Arrays.toString(k.shape()));
        }
        if (v.dim(0) != batch || v.dim(1) != kvh || v.dim(2) != lk) {
            throw new IllegalArgumentException("v: expected (" + batch + ", " + kvh + ", " + lk + ", dv) (batch of q, heads"
                    + " and length of k), got " + Arrays.toString(v.shape()));
        }
        if (kvh == 0 || h % kvh != 0) {
            throw new IllegalArgumentException("k: expected a number of heads dividing " + h + ", got " + kvh);
        }
        if (options.sinks() != null) {
            length(options.sinks(), h, "options.sinks");
        }
        checkCount("weights (B, H, Lq, Lk)", batch, h, lq, lk);
        double[][][][] weights = new double[batch][h][][];
        double[][][][] out = ReferenceScores.attend(heads(q), heads(k), heads(v), dv, mask, options, weights);
        return new AttentionOutput(toTensor4(out, batch, h, lq, dv), toTensor4(weights, batch, h, lq, lk));
    }

    /**
     * Rotary position embedding of {@code x (B, H, L, d)}, token {@code t} of batch row {@code b}
     * at {@code positions[b][t]} (non-negative), computed from {@code rope}'s getters; a new tensor.
     *
     * @param x the heads {@code (B, H, L, d)}
     * @param positions the position of each token {@code [B][L]}
     * @param rope the rotary configuration
     * @return the rotated tensor
     */
    public static Tensor rotary(Tensor x, int[][] positions, RotaryEmbedding rope) {
        rank4(x, "x");
        int batch = x.dim(0), h = x.dim(1), l = x.dim(2), d = x.dim(3);
        ReferenceDecoder.checkPositions(positions, batch, l, "positions");
        ReferenceDecoder.checkRope(rope, d, "rope");
        double[][][][] y = heads(x);
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int t = 0; t < l; t++) {
                    y[b][head][t] = ReferenceDecoder.rotate(y[b][head][t], positions[b][t], rope);
                }
            }
        }
        return toTensor4(y, batch, h, l, d);
    }
}
