package io.github.attn4j.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Holder of the Vector API constants every kernel uses, chosen once when the class is loaded.
 *
 * <p>The species is the platform's preferred float species (16 lanes on AVX-512, 8 on AVX2).
 * Keeping it in one {@code static final} field lets C2 constant-fold lane counts and masks in
 * every kernel.
 */
public final class Vectors {
    /** The float species all kernels use. */
    public static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    /** Number of float lanes in {@link #SPECIES}. */
    public static final int LANES = SPECIES.length();

    private Vectors() {
    }

    /** Rounds {@code n} up to a multiple of {@code multiple} (both positive). */
    static int roundUp(int n, int multiple) {
        return (n + multiple - 1) / multiple * multiple;
    }
}
