package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;

/**
 * The per-head transforms of a decoder layer between the q/k projections and attention, applied
 * in place in this order: optional QK-norm, then optional RoPE. Immutable; the {@code with}
 * methods return copies.
 *
 * <p><b>QK-norm</b> (Qwen3, Gemma 3): RMSNorm over each head's {@code hd} values,
 * {@code y_c = x_c / sqrt(mean_c(x_c²) + eps) · w_c}, with one weight vector for queries and one
 * for keys, each of length {@code hd}. The sum of squares is accumulated in double (four partial
 * sums), {@code 1 / sqrt(mean + eps)} is computed in double and rounded to float once, and
 * {@code y_c = (x_c · r) · w_c} in float. Gemma's {@code (1 + w)} convention is the caller's to
 * fold into the weights. With {@code eps = 0} an all-zero head gives NaN, as in PyTorch.
 *
 * <p><b>RoPE</b>: {@link RotaryEmbedding#rotateInPlace}, each token at its own position.
 */
final class HeadTransforms {
    private static final HeadTransforms NONE = new HeadTransforms(null, null, 0f, null);

    private final float[] qWeight;
    private final float[] kWeight;
    private final float eps;
    private final RotaryEmbedding rope;

    private HeadTransforms(float[] qWeight, float[] kWeight, float eps, RotaryEmbedding rope) {
        this.qWeight = qWeight;
        this.kWeight = kWeight;
        this.eps = eps;
        this.rope = rope;
    }

    /** No transform. */
    static HeadTransforms none() {
        return NONE;
    }

    /**
     * A copy with QK-norm (replacing any earlier one); the weights are copied.
     *
     * @throws NullPointerException     if a weight array is null
     * @throws IllegalArgumentException if {@code qWeight} is empty, {@code kWeight}'s length differs
     *                                  from {@code qWeight}'s, or {@code eps} is not finite and
     *                                  non-negative (lengths against the head width: {@link #checkHeadDim})
     */
    HeadTransforms withQkNorm(float[] qWeight, float[] kWeight, float eps) {
        Checks.notNull(qWeight, "qWeight");
        Checks.notNull(kWeight, "kWeight");
        Checks.check(qWeight.length > 0, "qWeight", "a positive length (one weight per head dim)", "length 0");
        if (kWeight.length != qWeight.length) {
            throw Checks.fail("kWeight", "length qWeight.length = " + qWeight.length,
                    "length " + kWeight.length);
        }
        Checks.check(Float.isFinite(eps) && eps >= 0, "eps", "a finite non-negative value", eps);
        return new HeadTransforms(qWeight.clone(), kWeight.clone(), eps, rope);
    }

    /**
     * A copy with RoPE (replacing any earlier one).
     *
     * @throws NullPointerException if {@code rope} is null
     */
    HeadTransforms withRotary(RotaryEmbedding rope) {
        Checks.notNull(rope, "rope");
        return new HeadTransforms(qWeight, kWeight, eps, rope);
    }

    /** Whether neither QK-norm nor RoPE is set. */
    boolean isIdentity() {
        return qWeight == null && rope == null;
    }

    /** The rotary embedding, or null when none is set. */
    RotaryEmbedding rotary() {
        return rope;
    }

    /**
     * Throws unless the transforms fit heads of {@code headDim} values.
     *
     * @throws IllegalArgumentException naming {@code qWeight} if the QK-norm weights are not of
     *                                  length {@code headDim}, or {@code rotaryDim} if it exceeds it
     */
    void checkHeadDim(int headDim) {
        if (qWeight != null) {
            if (qWeight.length != headDim) {
                throw Checks.fail("qWeight", "length headDim = " + headDim + " (QK-norm weights)",
                        "length " + qWeight.length);
            }
        }
        if (rope != null) {
            rope.checkHeadDim(headDim);
        }
    }

    /**
     * The positions {@code [batch][length]} of the rows the transforms will be applied to, with
     * their RoPE angles computed once: shared by the queries and keys of a self-attention call and
     * by every chunk of its batch rows. Positions already validated by the caller.
     */
    Positions at(int[][] rows, int batch, int length) {
        return new Positions(rows, rope == null ? null : rope.angles(rows, batch, length));
    }

    /** Positions of rows, and their angle table (null without RoPE); see {@link #at}. */
    record Positions(int[][] rows, AngleTable angles) {
    }

    /**
     * Normalizes (query weights) then rotates every row of {@code q} in place, token {@code t} of
     * batch row {@code b} at {@code positions.rows()[b][t]}, the first {@code q.batch()} rows of
     * them. Arguments already validated: the width by {@link #checkHeadDim}.
     */
    void applyToQueries(HeadLayout q, Positions positions) {
        apply(q, qWeight, positions);
    }

    /** As {@link #applyToQueries}, with the key weights. */
    void applyToKeys(HeadLayout k, Positions positions) {
        apply(k, kWeight, positions);
    }

    private void apply(HeadLayout x, float[] weight, Positions positions) {
        if (weight != null) {
            rmsNorm(x, weight, eps);
        }
        if (rope != null) {
            rope.rotateInPlace(x, positions.rows(), positions.angles());
        }
    }

    private static void rmsNorm(HeadLayout x, float[] w, float eps) {
        float[] v = x.data();
        int d = x.width();
        for (int b = 0; b < x.batch(); b++) {
            for (int t = 0; t < x.length(); t++) {
                for (int h = 0; h < x.heads(); h++) {
                    int base = x.at(b, t, h);
                    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                    int c = 0;
                    for (; c + 3 < d; c += 4) {
                        double a0 = v[base + c], a1 = v[base + c + 1], a2 = v[base + c + 2], a3 = v[base + c + 3];
                        s0 += a0 * a0;
                        s1 += a1 * a1;
                        s2 += a2 * a2;
                        s3 += a3 * a3;
                    }
                    for (; c < d; c++) {
                        double a = v[base + c];
                        s0 += a * a;
                    }
                    float r = (float) (1.0 / Math.sqrt(((s0 + s1) + (s2 + s3)) / d + eps));
                    for (c = 0; c < d; c++) {
                        v[base + c] = v[base + c] * r * w[c];
                    }
                }
            }
        }
    }

    @Override
    public String toString() {
        return "HeadTransforms[" + (qWeight != null ? "qkNorm(hd=" + qWeight.length + ", eps=" + eps + ")" : "")
                + (qWeight != null && rope != null ? ", " : "") + (rope != null ? rope : "") + "]";
    }
}
