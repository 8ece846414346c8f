package io.github.attn4j;

import io.github.attn4j.kernel.HeadLayout;

/**
 * STUB of the per-head transforms (QK-norm, then RoPE) applied in place to projected queries and
 * keys. The real class comes from branch {@code rope} and replaces this file at merge; only
 * {@link #none()} works here.
 */
final class HeadTransforms {
    private static final HeadTransforms NONE = new HeadTransforms(true);

    private final boolean identity;

    private HeadTransforms(boolean identity) {
        this.identity = identity;
    }

    static HeadTransforms none() {
        return NONE;
    }

    HeadTransforms withQkNorm(float[] qWeight, float[] kWeight, float eps) {
        return new HeadTransforms(false);
    }

    HeadTransforms withRotary(RotaryEmbedding rope) {
        return new HeadTransforms(false);
    }

    boolean isIdentity() {
        return identity;
    }

    void checkHeadDim(int headDim) {
    }

    void applyToQueries(HeadLayout q, int[][] positions) {
        if (!identity) {
            throw new UnsupportedOperationException("not yet");
        }
    }

    void applyToKeys(HeadLayout k, int[][] positions) {
        if (!identity) {
            throw new UnsupportedOperationException("not yet");
        }
    }
}
