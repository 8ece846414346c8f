package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * Holder of the Vector API constants the vector kernels use: the single switch for the vector
 * width. The species is the one {@link KernelSelection} chose (the platform's preferred species
 * unless {@value KernelSelection#PROPERTY} forces a width). Keeping it in one
 * {@code static final} field lets C2 constant-fold lane counts and masks in every kernel.
 *
 * <p>Only the vector kernels load this class, and only after the selection found
 * {@code jdk.incubator.vector} readable.
 */
final class Vectors {
    /** The float species all vector kernels use. */
    static final VectorSpecies<Float> SPECIES =
            VectorSpecies.of(float.class, VectorShape.forBitSize(KernelSelection.CHOICE.bits()));
    /** Number of float lanes in {@link #SPECIES}. */
    static final int LANES = SPECIES.length();

    private Vectors() {
    }
}
