package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;

import java.util.Objects;

/**
 * Rotary position embeddings (RoPE, Su et al.): rotates pairs of a head's dimensions by angles
 * proportional to the token's position. Immutable; every configuration method returns a copy.
 *
 * <p><b>Frequencies.</b> Pair {@code i < rotaryDim/2} turns by {@code invFreq_i = theta^(-2i/rotaryDim)}
 * radians per position (computed in double). A pair {@code (x, y)} at position {@code p} becomes
 * {@code (x cos a − y sin a, x sin a + y cos a)} with {@code a = p · invFreq_i}.
 *
 * <p><b>Pairings.</b> {@link #of} pairs dims {@code (i, i + rotaryDim/2)} ("rotate_half": GPT-NeoX,
 * Hugging Face Llama, Qwen, Mistral, Gemma); {@link #interleaved()} pairs {@code (2i, 2i+1)} (GPT-J,
 * Meta's original Llama checkpoints). Only the first {@code rotaryDim} dims of a head rotate; the rest
 * pass through unchanged (partial rotary: Phi, GPT-NeoX). {@code rotaryDim} must not exceed the head
 * width, which is checked when the rotation is applied.
 *
 * <p><b>Scalings</b> (at most one; setting one replaces the others). {@link #linearScaling} divides
 * positions by a factor ({@code a = (p / factor) · invFreq_i}). {@link #llama3Scaling} rescales the
 * frequencies by the rule of Llama 3.1 (Hugging Face {@code _compute_llama3_parameters}): with
 * {@code wavelen = 2π / invFreq}, pairs with {@code wavelen < originalMaxPositions / highFreqFactor}
 * keep their frequency, pairs with {@code wavelen > originalMaxPositions / lowFreqFactor} get
 * {@code invFreq / factor}, and between the two
 * {@code invFreq' = (1 − s) · invFreq / factor + s · invFreq} with
 * {@code s = (originalMaxPositions / wavelen − lowFreqFactor) / (highFreqFactor − lowFreqFactor)}.
 * {@link #yarnScaling} is YaRN (Peng et al., as in Hugging Face {@code _compute_yarn_parameters};
 * gpt-oss, Qwen with long context): with {@code r = rotaryDim} and
 * {@code dim(n) = r · ln(originalMaxPositions / (2π n)) / (2 ln theta)} (the pair index whose
 * wavelength fits {@code n} times in the original context), {@code low = dim(betaFast)} and
 * {@code high = dim(betaSlow)} (rounded down and up when {@code truncate}), clamped to
 * {@code [0, r − 1]}, and {@code high} raised by 0.001 if equal to {@code low}, pair {@code i} gets
 * {@code invFreq' = ramp · invFreq / factor + (1 − ramp) · invFreq} with
 * {@code ramp = clamp((i − low) / (high − low), 0, 1)}; and every rotated pair is also multiplied
 * by the scaling's {@linkplain YarnScaling#attentionFactor attention factor} (its cosine and sine
 * are), so scores between rotated dims grow by its square. Dims past {@code rotaryDim} are not
 * multiplied.
 *
 * <p><b>Rounding.</b> Each angle is computed in double, its cosine and sine in double (times the
 * YaRN attention factor, if any), each rounded to float once; one table row per distinct position
 * is computed per call and shared by every batch row and head. The rotation is float arithmetic: {@code x' = fma(x, cos, −(y·sin))},
 * {@code y' = fma(y, cos, x·sin)}, two roundings per output, so each output is within about
 * {@code 3·2⁻²⁴·(|x| + |y|)} of the exact rotation.
 */
public final class RotaryEmbedding {
    /**
     * Llama 3.1 frequency scaling parameters, as published in the model's {@code rope_scaling}
     * (Llama 3.1: factor 8, lowFreqFactor 1, highFreqFactor 4, originalMaxPositions 8192).
     *
     * @param factor the divisor of the low frequencies
     * @param lowFreqFactor pairs with {@code wavelen > originalMaxPositions / lowFreqFactor} are divided by factor
     * @param highFreqFactor pairs with {@code wavelen < originalMaxPositions / highFreqFactor} keep their frequency
     * @param originalMaxPositions the original context length
     */
    public record Llama3Scaling(double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions) {
        /**
         * Checks the parameters.
         *
         * @throws IllegalArgumentException unless {@code factor} and {@code lowFreqFactor} are finite
         *                                  and positive, {@code highFreqFactor} is finite and greater
         *                                  than {@code lowFreqFactor}, and {@code originalMaxPositions}
         *                                  is positive
         */
        public Llama3Scaling {
            checkFactor(factor, "factor");
            checkFactor(lowFreqFactor, "lowFreqFactor");
            if (!(Double.isFinite(highFreqFactor) && highFreqFactor > lowFreqFactor)) {
                throw Checks.fail("highFreqFactor",
                        "a finite value > lowFreqFactor = " + lowFreqFactor, highFreqFactor);
            }
            Checks.positive(originalMaxPositions, "originalMaxPositions");
        }
    }

    /**
     * YaRN scaling parameters, as published in a model's {@code rope_scaling} (gpt-oss: factor 32,
     * originalMaxPositions 4096, betaFast 32, betaSlow 1, truncate false). See the class comment
     * for how they set each pair's frequency.
     *
     * @param factor               the divisor of the interpolated (low) frequencies
     * @param originalMaxPositions the original context length ({@code original_max_position_embeddings})
     * @param betaFast             rotations in the original context above which a pair keeps its frequency
     * @param betaSlow             rotations in the original context below which a pair is divided by factor
     * @param truncate             whether the ramp's ends are rounded to whole pair indices
     *                             (Hugging Face's default; gpt-oss sets false)
     * @param attentionFactor      the factor the rotated dims are multiplied by ({@code attention_factor};
     *                             {@link #of} uses {@code 0.1 ln(factor) + 1}, or 1 for a factor up to 1)
     */
    public record YarnScaling(double factor, int originalMaxPositions, double betaFast, double betaSlow, boolean truncate,
                              double attentionFactor) {
        /**
         * Checks the parameters.
         *
         * @throws IllegalArgumentException unless {@code factor}, {@code betaSlow} and
         *                                  {@code attentionFactor} are finite and positive,
         *                                  {@code betaFast} is finite and greater than {@code betaSlow},
         *                                  and {@code originalMaxPositions} is positive
         */
        public YarnScaling {
            checkFactor(factor, "factor");
            Checks.positive(originalMaxPositions, "originalMaxPositions");
            checkFactor(betaSlow, "betaSlow");
            if (!(Double.isFinite(betaFast) && betaFast > betaSlow)) {
                throw Checks.fail("betaFast",
                        "a finite value > betaSlow = " + betaSlow, betaFast);
            }
            checkFactor(attentionFactor, "attentionFactor");
        }

        /**
         * The parameters with the default attention factor: {@code 0.1 ln(factor) + 1} when
         * {@code factor > 1}, else 1 (Hugging Face's {@code get_mscale}).
         *
         * @param factor               the divisor of the interpolated (low) frequencies
         * @param originalMaxPositions the original context length
         * @param betaFast             rotations above which a pair keeps its frequency
         * @param betaSlow             rotations below which a pair is divided by factor
         * @param truncate             whether the ramp's ends are rounded to whole pair indices
         * @return the scaling
         * @throws IllegalArgumentException as the constructor
         */
        public static YarnScaling of(double factor, int originalMaxPositions, double betaFast, double betaSlow, boolean truncate) {
            checkFactor(factor, "factor");
            return new YarnScaling(factor, originalMaxPositions, betaFast, betaSlow, truncate,
                    factor > 1 ? 0.1 * Math.log(factor) + 1 : 1);
        }
    }

    private final int rotaryDim;
    private final double theta;
    private final boolean interleaved;
    private final double linearFactor;
    private final Llama3Scaling llama3;
    private final YarnScaling yarn;
    /** The (scaled) inverse frequency of each pair, rotaryDim / 2 values. */
    private final double[] invFreq;
    /** What the cosines and sines are multiplied by: YaRN's attention factor, else 1. */
    private final double magnitude;

    private RotaryEmbedding(int rotaryDim, double theta, boolean interleaved, double linearFactor, Llama3Scaling llama3,
                            YarnScaling yarn) {
        this.rotaryDim = rotaryDim;
        this.theta = theta;
        this.interleaved = interleaved;
        this.linearFactor = linearFactor;
        this.llama3 = llama3;
        this.yarn = yarn;
        this.invFreq = RopeFrequencies.inverse(rotaryDim, theta, llama3, yarn);
        this.magnitude = yarn == null ? 1.0 : yarn.attentionFactor();
    }

    /**
     * rotate_half pairing (GPT-NeoX, HF Llama): dims {@code (i, i + rotaryDim/2)} for {@code i < rotaryDim/2}.
     *
     * @param rotaryDim number of leading dims of each head that rotate: even, at least 2, at most
     *                  the head width (checked when applied)
     * @param theta     frequency base, finite and positive (10000 in most models, 500000 in Llama 3)
     * @return a rotate_half embedding without scaling
     * @throws IllegalArgumentException if {@code rotaryDim} is odd or below 2, or {@code theta} is
     *                                  not finite and positive
     */
    public static RotaryEmbedding of(int rotaryDim, double theta) {
        Checks.check(rotaryDim >= 2 && rotaryDim % 2 == 0, "rotaryDim", "an even value >= 2", rotaryDim);
        Checks.check(Double.isFinite(theta) && theta > 0, "theta", "a finite positive value", theta);
        return new RotaryEmbedding(rotaryDim, theta, false, 1.0, null, null);
    }

    /**
     * GPT-J / Meta pairing: dims {@code (2i, 2i+1)}.
     *
     * @return a copy with interleaved pairing
     */
    public RotaryEmbedding interleaved() {
        return new RotaryEmbedding(rotaryDim, theta, true, linearFactor, llama3, yarn);
    }

    /**
     * Positions divided by {@code factor}; replaces any Llama 3 or YaRN scaling.
     *
     * @param factor the divisor of positions
     * @return a copy with linear scaling
     * @throws IllegalArgumentException if {@code factor} is not finite and positive
     */
    public RotaryEmbedding linearScaling(double factor) {
        checkFactor(factor, "factor");
        return new RotaryEmbedding(rotaryDim, theta, interleaved, factor, null, null);
    }

    /**
     * Llama 3.1 frequency scaling (see the class comment); replaces any linear or YaRN scaling.
     *
     * @param factor the divisor of the low frequencies
     * @param lowFreqFactor pairs with {@code wavelen > originalMaxPositions / lowFreqFactor} are divided by factor
     * @param highFreqFactor pairs with {@code wavelen < originalMaxPositions / highFreqFactor} keep their frequency
     * @param originalMaxPositions the original context length
     * @return a copy with Llama 3.1 scaling
     * @throws IllegalArgumentException as {@link Llama3Scaling}'s constructor
     */
    public RotaryEmbedding llama3Scaling(double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions) {
        return new RotaryEmbedding(rotaryDim, theta, interleaved, 1.0,
                new Llama3Scaling(factor, lowFreqFactor, highFreqFactor, originalMaxPositions), null);
    }

    /**
     * YaRN scaling with the default attention factor (see the class comment and
     * {@link YarnScaling#of}); replaces any linear or Llama 3 scaling. For gpt-oss:
     * {@code RotaryEmbedding.of(64, 150_000).yarnScaling(32, 4096, 32, 1, false)}.
     *
     * @param factor               the divisor of the interpolated (low) frequencies
     * @param originalMaxPositions the original context length
     * @param betaFast             rotations above which a pair keeps its frequency
     * @param betaSlow             rotations below which a pair is divided by factor
     * @param truncate             whether the ramp's ends are rounded to whole pair indices
     * @return a copy with YaRN scaling
     * @throws IllegalArgumentException as {@link YarnScaling}'s constructor
     */
    public RotaryEmbedding yarnScaling(double factor, int originalMaxPositions, double betaFast, double betaSlow, boolean truncate) {
        return yarnScaling(YarnScaling.of(factor, originalMaxPositions, betaFast, betaSlow, truncate));
    }

    /**
     * YaRN scaling with all its parameters, an explicit attention factor included; replaces any
     * linear or Llama 3 scaling.
     *
     * @param scaling the parameters
     * @return a copy with YaRN scaling
     * @throws NullPointerException if {@code scaling} is null
     */
    public RotaryEmbedding yarnScaling(YarnScaling scaling) {
        Checks.notNull(scaling, "scaling");
        return new RotaryEmbedding(rotaryDim, theta, interleaved, 1.0, null, scaling);
    }

    /**
     * Number of leading dims rotated; the rest pass through.
     *
     * @return the number of rotated dims
     */
    public int rotaryDim() {
        return rotaryDim;
    }

    /**
     * Base of the frequencies {@code theta^(-2i/rotaryDim)}.
     *
     * @return the frequency base
     */
    public double theta() {
        return theta;
    }

    /**
     * Whether pairs are {@code (2i, 2i+1)} (true) or {@code (i, i + rotaryDim/2)} (false).
     *
     * @return whether pairs are {@code (2i, 2i+1)}
     */
    public boolean isInterleaved() {
        return interleaved;
    }

    /**
     * The linear scaling factor positions are divided by; 1 when none is set.
     *
     * @return the linear scaling factor
     */
    public double linearFactor() {
        return linearFactor;
    }

    /**
     * The Llama 3 scaling, or null when none is set.
     *
     * @return the Llama 3 scaling, or null
     */
    public Llama3Scaling llama3() {
        return llama3;
    }

    /**
     * The YaRN scaling, or null when none is set.
     *
     * @return the YaRN scaling, or null
     */
    public YarnScaling yarn() {
        return yarn;
    }

    /**
     * Applies the rotation to {@code x (B, H, L, d)} at {@code positions [B][L]}; returns a new tensor
     * ({@code x} is not modified). Token {@code t} of batch row {@code b} rotates at position
     * {@code positions[b][t]}, in every head.
     *
     * @param x the heads {@code (B, H, L, d)}
     * @param positions the position of each token {@code [B][L]}
     * @return the rotated copy of {@code x}
     * @throws NullPointerException     if {@code x}, {@code positions} or one of its rows is null
     * @throws IllegalArgumentException if {@code x} is not of rank 4, {@code rotaryDim > d},
     *                                  {@code positions} is not {@code B} rows of {@code L}, or a
     *                                  position is negative
     */
    public Tensor apply(Tensor x, int[][] positions) {
        Checks.rank(x, 4, "x", "(B, H, L, d)");
        int batch = x.dim(0), heads = x.dim(1), length = x.dim(2), d = x.dim(3);
        checkHeadDim(d);
        checkPositions(positions, batch, length);
        float[] copy = x.toArray();
        rotateInPlace(HeadLayout.headsMajor(copy, batch, heads, length, d), positions);
        return Tensor.of(copy, x.shape());
    }

    /**
     * Rotates every (batch, token, head) row of {@code x} in place, token {@code t} of batch row
     * {@code b} at position {@code positions[b][t]} (already validated, non-negative; the row width
     * already checked against {@code rotaryDim}).
     */
    void rotateInPlace(HeadLayout x, int[][] positions) {
        rotateInPlace(x, positions, angles(positions, x.batch(), x.length()));
    }

    /**
     * The cos and sin of every pair at the positions {@code [batch][length]}: a table that rotates
     * the rows of any layout whose positions are among these.
     */
    AngleTable angles(int[][] positions, int batch, int length) {
        return batch == 0 || length == 0 ? null
                : new AngleTable(positions, batch, length, invFreq, linearFactor, magnitude);
    }

    /**
     * {@link #rotateInPlace(HeadLayout, int[][])} with the angle table of these positions, or of
     * more (a chunk of the batch rows {@code table} was made for).
     */
    void rotateInPlace(HeadLayout x, int[][] positions, AngleTable table) {
        if (x.batch() > 0 && x.length() > 0 && x.heads() > 0) {
            table.rotate(x, positions, interleaved);
        }
    }

    /** Throws unless {@code rotaryDim} fits in a head of {@code headDim} values. */
    void checkHeadDim(int headDim) {
        if (rotaryDim > headDim) {
            throw Checks.fail("rotaryDim", "at most headDim = " + headDim, rotaryDim);
        }
    }

    /** Throws unless {@code positions} holds {@code batch} rows of {@code length} non-negative positions. */
    static void checkPositions(int[][] positions, int batch, int length) {
        Checks.notNull(positions, "positions");
        if (positions.length != batch) {
            throw Checks.fail("positions", "B = " + batch + " rows", positions.length);
        }
        for (int b = 0; b < batch; b++) {
            int[] row = Checks.notNull(positions[b], "positions[" + b + "]");
            if (row.length != length) {
                throw Checks.fail("positions[" + b + "]", "length L = " + length, row.length);
            }
            for (int t = 0; t < length; t++) {
                if (row[t] < 0) {
                    throw new IllegalArgumentException("positions[" + b + "][" + t
                            + "]: expected a non-negative position, got " + row[t]);
                }
            }
        }
    }

    private static void checkFactor(double factor, String name) {
        Checks.check(Double.isFinite(factor) && factor > 0, name, "a finite positive value", factor);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RotaryEmbedding r && rotaryDim == r.rotaryDim && interleaved == r.interleaved
                && Double.compare(theta, r.theta) == 0 && Double.compare(linearFactor, r.linearFactor) == 0
                && Objects.equals(llama3, r.llama3) && Objects.equals(yarn, r.yarn);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rotaryDim, theta, interleaved, linearFactor, llama3, yarn);
    }

    @Override
    public String toString() {
        return "RotaryEmbedding[rotaryDim=" + rotaryDim + ", theta=" + theta
                + (interleaved ? ", interleaved" : ", rotate_half")
                + (linearFactor != 1.0 ? ", linearFactor=" + linearFactor : "")
                + (llama3 != null ? ", " + llama3 : "") + (yarn != null ? ", " + yarn : "") + "]";
    }
}
