package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.Tensor;

import java.util.Arrays;
import java.util.Objects;

/**
 * The scalar oracle: multi-head attention written as the textbook steps, one loop nest per step,
 * in double precision. It shares no code with the kernels (it reads tensors and masks through
 * the public API only and interprets every mask part itself), so the property tests that compare
 * the two check the kernels against an independent implementation.
 *
 * <p>Steps of {@link #multiHead}: project (y = x·Wᵀ + b), split heads, scaled dot product
 * ({@link #scaledDotProduct}: scale, mask, softmax, weight values), merge heads, project.
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
        Objects.requireNonNull(p, "p must not be null");
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
        // 3.-6. Scale, mask, softmax, weight values.
        double[][][][] weights = new double[batch][h][][];
        double[][][][] heads = attend(qh, kh, vh, hd, mask, p.scale(), weights);
        // 7. Merge heads: [b][h][t][c] -> (B*Lq, H*hd).
        double[][] merged = new double[batch * lq][h * hd];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int t = 0; t < lq; t++) {
                    System.arraycopy(heads[b][head][t], 0, merged[b * lq + t], head * hd, hd);
                }
            }
        }
        // 8. Output projection.
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
        rank4(q, "q");
        rank4(k, "k");
        rank4(v, "v");
        Objects.requireNonNull(mask, "mask must not be null");
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
        checkCount("weights (B, H, Lq, Lk)", batch, h, lq, lk);
        double[][][][] weights = new double[batch][h][][];
        double[][][][] out = attend(heads(q), heads(k), heads(v), dv, mask, scale, weights);
        double[][] flat = new double[batch * h * lq][];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int t = 0; t < lq; t++) {
                    flat[(b * h + head) * lq + t] = out[b][head][t];
                }
            }
        }
        return new AttentionOutput(toTensor(flat, batch, h, lq, dv), toTensor4(weights, batch, h, lq, lk));
    }

    /** Steps 3 to 6 for every (batch, head); fills {@code weights[b][h]} and returns the per-head outputs. */
    private static double[][][][] attend(double[][][][] q, double[][][][] k, double[][][][] v, int dv,
                                         AttentionMask mask, double scale, double[][][][] weights) {
        int batch = q.length, h = batch == 0 ? 0 : q[0].length, kvh = batch == 0 ? 1 : k[0].length;
        int lq = h == 0 ? 0 : q[0][0].length, lk = batch == 0 || kvh == 0 ? 0 : k[0][0].length;
        mask.checkApplicable(batch, h, lq, lk);
        MaskOracle oracle = new MaskOracle(mask, batch, h, lq, lk);
        double[][][][] out = new double[batch][h][][];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                int g = head / (h / kvh);
                double[][] scores = new double[lq][lk];
                for (int i = 0; i < lq; i++) {
                    for (int j = 0; j < lk; j++) {
                        double dot = 0;
                        for (int c = 0; c < q[b][head][i].length; c++) {
                            dot += q[b][head][i][c] * k[b][g][j][c];
                        }
                        scores[i][j] = scale * dot;                                   // 3. scale
                        scores[i][j] = oracle.apply(scores[i][j], b, head, i, j);     // 4. mask
                    }
                    scores[i] = softmax(scores[i]);                                   // 5. softmax
                }
                double[][] o = new double[lq][dv];
                for (int i = 0; i < lq; i++) {
                    for (int j = 0; j < lk; j++) {
                        for (int c = 0; c < dv; c++) {
                            o[i][c] += scores[i][j] * v[b][g][j][c];                  // 6. weight values
                        }
                    }
                }
                weights[b][head] = scores;
                out[b][head] = o;
            }
        }
        return out;
    }

    /** Softmax with the maximum subtracted; a row of only -Infinity gives zeros. */
    static double[] softmax(double[] x) {
        double max = Double.NEGATIVE_INFINITY;
        for (double d : x) {
            max = Math.max(max, d);
        }
        double[] y = new double[x.length];
        if (max == Double.NEGATIVE_INFINITY) {
            return y;
        }
        double sum = 0;
        for (int j = 0; j < x.length; j++) {
            y[j] = Math.exp(x[j] - max);
            sum += y[j];
        }
        for (int j = 0; j < x.length; j++) {
            y[j] /= sum;
        }
        return y;
    }

    /** {@code y = x·Wᵀ + b} with W {@code (out, in)} row-major. */
    private static double[][] linear(double[][] x, float[] w, float[] bias, int out) {
        double[][] y = new double[x.length][out];
        for (int r = 0; r < x.length; r++) {
            int in = x[r].length;
            for (int o = 0; o < out; o++) {
                double acc = bias == null ? 0 : bias[o];
                for (int c = 0; c < in; c++) {
                    acc += x[r][c] * w[o * in + c];
                }
                y[r][o] = acc;
            }
        }
        return y;
    }

    private static double[][][][] splitHeads(double[][] x, int batch, int length, int heads, int hd) {
        double[][][][] y = new double[batch][heads][length][hd];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                for (int head = 0; head < heads; head++) {
                    System.arraycopy(x[b * length + t], head * hd, y[b][head][t], 0, hd);
                }
            }
        }
        return y;
    }

    /** A rank-3 tensor (B, L, E) as B*L rows of E doubles. */
    private static double[][] rows(Tensor t) {
        float[] a = t.toArray();
        int width = t.dim(2), n = t.dim(0) * t.dim(1);
        double[][] r = new double[n][width];
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < width; c++) {
                r[i][c] = a[i * width + c];
            }
        }
        return r;
    }

    /** A rank-4 tensor as [b][head][t][c]. */
    private static double[][][][] heads(Tensor t) {
        float[] a = t.toArray();
        int[] s = t.shape();
        double[][][][] y = new double[s[0]][s[1]][s[2]][s[3]];
        int i = 0;
        for (double[][][] b : y) {
            for (double[][] head : b) {
                for (double[] row : head) {
                    for (int c = 0; c < row.length; c++) {
                        row[c] = a[i++];
                    }
                }
            }
        }
        return y;
    }

    /**
     * Rejects, before anything is allocated, a result or buffer whose element count passes
     * {@code Integer.MAX_VALUE - 8}, the largest array the reference (like the library) builds.
     */
    private static void checkCount(String name, long... dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
            if (n > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException(name + ": element count of " + Arrays.toString(dims)
                        + " exceeds the limit of " + (Integer.MAX_VALUE - 8) + " elements");
            }
        }
    }

    private static Tensor toTensor(double[][] rows, int... shape) {
        int width = shape[shape.length - 1];
        float[] a = new float[rows.length * width];
        for (int r = 0; r < rows.length; r++) {
            for (int c = 0; c < width; c++) {
                a[r * width + c] = (float) rows[r][c];
            }
        }
        return Tensor.of(a, shape);
    }

    private static Tensor toTensor4(double[][][][] x, int batch, int h, int lq, int lk) {
        double[][] rows = new double[batch * h * lq][];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int i = 0; i < lq; i++) {
                    rows[(b * h + head) * lq + i] = x[b][head][i];
                }
            }
        }
        return toTensor(rows, batch, h, lq, lk);
    }

    private static int rank3(Tensor t, String name, int e) {
        Objects.requireNonNull(t, name + " must not be null");
        if (t.rank() != 3 || t.dim(2) != e) {
            throw new IllegalArgumentException(name + ": expected shape (B, L, " + e + "), got " + Arrays.toString(t.shape()));
        }
        return t.dim(0);
    }

    private static void rank4(Tensor t, String name) {
        Objects.requireNonNull(t, name + " must not be null");
        if (t.rank() != 4) {
            throw new IllegalArgumentException(name + ": expected rank 4 (B, heads, L, width), got " + Arrays.toString(t.shape()));
        }
    }

    private static void positive(int value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": expected a positive value, got " + value);
        }
    }

    private static void length(float[] a, long expected, String name) {
        Objects.requireNonNull(a, name + " must not be null");
        if (a.length != expected) {
            throw new IllegalArgumentException(name + ": expected length " + expected + ", got " + a.length);
        }
    }
}
