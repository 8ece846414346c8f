package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;

import java.util.Arrays;
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
 * <p><b>Scalings</b> (at most one; setting one replaces the other). {@link #linearScaling} divides
 * positions by a factor ({@code a = (p / factor) · invFreq_i}). {@link #llama3Scaling} rescales the
 * frequencies by the rule of Llama 3.1 (Hugging Face {@code _compute_llama3_parameters}): with
 * {@code wavelen = 2π / invFreq}, pairs with {@code wavelen < originalMaxPositions / highFreqFactor}
 * keep their frequency, pairs with {@code wavelen > originalMaxPositions / lowFreqFactor} get
 * {@code invFreq / factor}, and between the two
 * {@code invFreq' = (1 − s) · invFreq / factor + s · invFreq} with
 * {@code s = (originalMaxPositions / wavelen − lowFreqFactor) / (highFreqFactor − lowFreqFactor)}.
 *
 * <p><b>Rounding.</b> Each angle is computed in double, its cosine and sine in double, each rounded
 * to float once; one table row per distinct position is computed per call and shared by every
 * batch row and head. The rotation is float arithmetic: {@code x' = fma(x, cos, −(y·sin))},
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
            Checks.check(Double.isFinite(highFreqFactor) && highFreqFactor > lowFreqFactor, "highFreqFactor",
                    "a finite value > lowFreqFactor = " + lowFreqFactor, highFreqFactor);
            Checks.positive(originalMaxPositions, "originalMaxPositions");
        }
    }

    private final int rotaryDim;
    private final double theta;
    private final boolean interleaved;
    private final double linearFactor;
    private final Llama3Scaling llama3;
    /** The (scaled) inverse frequency of each pair, rotaryDim / 2 values. */
    private final double[] invFreq;

    private RotaryEmbedding(int rotaryDim, double theta, boolean interleaved, double linearFactor, Llama3Scaling llama3) {
        this.rotaryDim = rotaryDim;
        this.theta = theta;
        this.interleaved = interleaved;
        this.linearFactor = linearFactor;
        this.llama3 = llama3;
        this.invFreq = inverseFrequencies(rotaryDim, theta, llama3);
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
        return new RotaryEmbedding(rotaryDim, theta, false, 1.0, null);
    }

    /**
     * GPT-J / Meta pairing: dims {@code (2i, 2i+1)}.
     *
     * @return a copy with interleaved pairing
     */
    public RotaryEmbedding interleaved() {
        return new RotaryEmbedding(rotaryDim, theta, true, linearFactor, llama3);
    }

    /**
     * Positions divided by {@code factor}; replaces any Llama 3 scaling.
     *
     * @param factor the divisor of positions
     * @return a copy with linear scaling
     * @throws IllegalArgumentException if {@code factor} is not finite and positive
     */
    public RotaryEmbedding linearScaling(double factor) {
        checkFactor(factor, "factor");
        return new RotaryEmbedding(rotaryDim, theta, interleaved, factor, null);
    }

    /**
     * Llama 3.1 frequency scaling (see the class comment); replaces any linear scaling.
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
                new Llama3Scaling(factor, lowFreqFactor, highFreqFactor, originalMaxPositions));
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
        int batch = x.batch(), length = x.length(), heads = x.heads();
        if (batch == 0 || length == 0 || heads == 0) {
            return;
        }
        AngleTable table = new AngleTable(positions, batch, length);
        int half = rotaryDim / 2;
        float[] v = x.data();
        float[] cos = table.cos, sin = table.sin;
        for (int b = 0; b < batch; b++) {
            int[] rowPositions = positions[b];
            for (int t = 0; t < length; t++) {
                int row = table.row(rowPositions[t]) * half;
                for (int h = 0; h < heads; h++) {
                    int base = x.at(b, t, h);
                    if (interleaved) {
                        rotateInterleaved(v, base, cos, sin, row, half);
                    } else {
                        rotateHalf(v, base, cos, sin, row, half);
                    }
                }
            }
        }
    }

    /** Throws unless {@code rotaryDim} fits in a head of {@code headDim} values. */
    void checkHeadDim(int headDim) {
        Checks.check(rotaryDim <= headDim, "rotaryDim", "at most headDim = " + headDim, rotaryDim);
    }

    /** Throws unless {@code positions} holds {@code batch} rows of {@code length} non-negative positions. */
    static void checkPositions(int[][] positions, int batch, int length) {
        Checks.notNull(positions, "positions");
        Checks.check(positions.length == batch, "positions", "B = " + batch + " rows", positions.length);
        for (int b = 0; b < batch; b++) {
            int[] row = Checks.notNull(positions[b], "positions[" + b + "]");
            Checks.check(row.length == length, "positions[" + b + "]", "length L = " + length, row.length);
            for (int t = 0; t < length; t++) {
                if (row[t] < 0) {
                    throw new IllegalArgumentException("positions[" + b + "][" + t
                            + "]: expected a non-negative position, got " + row[t]);
                }
            }
        }
    }

    /** {@code (x, y) ← (x c − y s, y c + x s)} for the pairs {@code (j, j + half)}. */
    private static void rotateHalf(float[] v, int base, float[] cos, float[] sin, int row, int half) {
        for (int j = 0; j < half; j++) {
            float x = v[base + j], y = v[base + half + j];
            float c = cos[row + j], s = sin[row + j];
            v[base + j] = Math.fma(x, c, -(y * s));
            v[base + half + j] = Math.fma(y, c, x * s);
        }
    }

    /** {@code (x, y) ← (x c − y s, y c + x s)} for the pairs {@code (2j, 2j + 1)}. */
    private static void rotateInterleaved(float[] v, int base, float[] cos, float[] sin, int row, int half) {
        for (int j = 0; j < half; j++) {
            int i = base + 2 * j;
            float x = v[i], y = v[i + 1];
            float c = cos[row + j], s = sin[row + j];
            v[i] = Math.fma(x, c, -(y * s));
            v[i + 1] = Math.fma(y, c, x * s);
        }
    }

    /**
     * The cos and sin of every pair's angle at each distinct position of one call, rows of
     * {@code rotaryDim / 2} floats. When the positions span at most as many values as there are
     * tokens (prefill {@code 0..L-1} in every batch row, decoding steps close together), the rows
     * cover that span and are indexed by {@code p - min}; otherwise one row per distinct position,
     * found by binary search.
     */
    private final class AngleTable {
        final float[] cos;
        final float[] sin;
        private final int min;
        /** The sorted distinct positions, or null when rows are indexed by {@code p - min}. */
        private final int[] distinct;

        AngleTable(int[][] positions, int batch, int length) {
            int lo = Integer.MAX_VALUE, hi = Integer.MIN_VALUE;
            for (int b = 0; b < batch; b++) {
                for (int t = 0; t < length; t++) {
                    int p = positions[b][t];
                    lo = Math.min(lo, p);
                    hi = Math.max(hi, p);
                }
            }
            long tokens = (long) batch * length;
            int rows;
            if ((long) hi - lo + 1 <= tokens) {
                distinct = null;
                rows = hi - lo + 1;
            } else {
                int[] all = new int[Math.toIntExact(tokens)];
                for (int b = 0, n = 0; b < batch; b++, n += length) {
                    System.arraycopy(positions[b], 0, all, n, length);
                }
                Arrays.sort(all);
                int n = 0;
                for (int i = 0; i < all.length; i++) {
                    if (i == 0 || all[i] != all[i - 1]) {
                        all[n++] = all[i];
                    }
                }
                distinct = Arrays.copyOf(all, n);
                rows = n;
            }
            min = lo;
            int half = rotaryDim / 2;
            int size = Math.multiplyExact(rows, half);
            cos = new float[size];
            sin = new float[size];
            for (int r = 0; r < rows; r++) {
                int p = distinct == null ? lo + r : distinct[r];
                double scaled = p / linearFactor;
                for (int i = 0, k = r * half; i < half; i++, k++) {
                    double a = scaled * invFreq[i];
                    cos[k] = (float) Math.cos(a);
                    sin[k] = (float) Math.sin(a);
                }
            }
        }

        /** The table row of position {@code p}, one of the positions the table was built for. */
        int row(int p) {
            return distinct == null ? p - min : Arrays.binarySearch(distinct, p);
        }
    }

    private static double[] inverseFrequencies(int rotaryDim, double theta, Llama3Scaling llama3) {
        double[] inv = new double[rotaryDim / 2];
        for (int i = 0; i < inv.length; i++) {
            inv[i] = Math.pow(theta, -2.0 * i / rotaryDim);
        }
        if (llama3 != null) {
            double lowWavelen = llama3.originalMaxPositions() / llama3.lowFreqFactor();
            double highWavelen = llama3.originalMaxPositions() / llama3.highFreqFactor();
            for (int i = 0; i < inv.length; i++) {
                double wavelen = 2 * Math.PI / inv[i];
                if (wavelen > lowWavelen) {
                    inv[i] = inv[i] / llama3.factor();
                } else if (wavelen >= highWavelen) {
                    double smooth = (llama3.originalMaxPositions() / wavelen - llama3.lowFreqFactor())
                            / (llama3.highFreqFactor() - llama3.lowFreqFactor());
                    inv[i] = (1 - smooth) * inv[i] / llama3.factor() + smooth * inv[i];
                }
            }
        }
        return inv;
    }

    private static void checkFactor(double factor, String name) {
        Checks.check(Double.isFinite(factor) && factor > 0, name, "a finite positive value", factor);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RotaryEmbedding r && rotaryDim == r.rotaryDim && interleaved == r.interleaved
                && Double.compare(theta, r.theta) == 0 && Double.compare(linearFactor, r.linearFactor) == 0
                && Objects.equals(llama3, r.llama3);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rotaryDim, theta, interleaved, linearFactor, llama3);
    }

    @Override
    public String toString() {
        return "RotaryEmbedding[rotaryDim=" + rotaryDim + ", theta=" + theta
                + (interleaved ? ", interleaved" : ", rotate_half")
                + (linearFactor != 1.0 ? ", linearFactor=" + linearFactor : "")
                + (llama3 != null ? ", " + llama3 : "") + "]";
    }
}
