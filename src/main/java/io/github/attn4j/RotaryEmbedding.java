package io.github.attn4j;

import io.github.attn4j.kernel.HeadLayout;

/**
 * Rotary position embeddings (RoPE, Su et al.): rotates pairs of a head's dimensions by angles
 * proportional to the token's position. Immutable; every configuration method returns a copy.
 *
 * <p>SKELETON: the contract of issue 12; the implementation is being written.
 */
public final class RotaryEmbedding {
    /**
     * Llama 3.1 frequency scaling parameters, as published in the model's {@code rope_scaling}.
     *
     * @param factor               {@code factor}: context extension factor
     * @param lowFreqFactor        {@code low_freq_factor}
     * @param highFreqFactor       {@code high_freq_factor}
     * @param originalMaxPositions {@code original_max_position_embeddings}
     */
    public record Llama3Scaling(double factor, double lowFreqFactor, double highFreqFactor, int originalMaxPositions) {
    }

    private final int rotaryDim;
    private final double theta;
    private final boolean interleaved;
    private final double linearFactor;
    private final Llama3Scaling llama3;

    private RotaryEmbedding(int rotaryDim, double theta, boolean interleaved, double linearFactor, Llama3Scaling llama3) {
        this.rotaryDim = rotaryDim;
        this.theta = theta;
        this.interleaved = interleaved;
        this.linearFactor = linearFactor;
        this.llama3 = llama3;
    }

    /**
     * rotate_half pairing (GPT-NeoX, HF Llama): dims {@code (i, i + rotaryDim/2)} for {@code i < rotaryDim/2}.
     *
     * @param rotaryDim number of leading dims of each head that rotate
     * @param theta     base of the frequencies
     * @return the embedding
     */
    public static RotaryEmbedding of(int rotaryDim, double theta) {
        return new RotaryEmbedding(rotaryDim, theta, false, 1.0, null);
    }

    /**
     * GPT-J / Meta pairing: dims {@code (2i, 2i+1)}.
     *
     * @return a copy with the interleaved pairing
     */
    public RotaryEmbedding interleaved() {
        return new RotaryEmbedding(rotaryDim, theta, true, linearFactor, llama3);
    }

    /**
     * Positions divided by {@code factor}.
     *
     * @param factor the factor positions are divided by
     * @return a copy with linear scaling instead of any Llama 3 scaling
     */
    public RotaryEmbedding linearScaling(double factor) {
        return new RotaryEmbedding(rotaryDim, theta, interleaved, factor, null);
    }

    /**
     * Llama 3.1 frequency scaling.
     *
     * @param factor               {@code factor}: context extension factor
     * @param lowFreqFactor        {@code low_freq_factor}
     * @param highFreqFactor       {@code high_freq_factor}
     * @param originalMaxPositions {@code original_max_position_embeddings}
     * @return a copy with Llama 3.1 scaling instead of any linear scaling
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
     * @return whether the pairing is interleaved
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
     * Applies the rotation to {@code x (B, H, L, d)} at {@code positions [B][L]}; returns a new tensor.
     *
     * @param x         heads {@code (B, H, L, d)}
     * @param positions position of every token {@code [B][L]}
     * @return the rotated tensor
     */
    public Tensor apply(Tensor x, int[][] positions) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Rotates every (batch, token, head) row of {@code x} in place, token {@code t} of batch row
     * {@code b} at position {@code positions[b][t]} (already validated, non-negative).
     */
    void rotateInPlace(HeadLayout x, int[][] positions) {
        throw new UnsupportedOperationException("not yet");
    }
}
