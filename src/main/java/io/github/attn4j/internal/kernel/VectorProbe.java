package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;

/**
 * The one question {@link KernelSelection} asks the Vector API, kept in its own class so that
 * nothing else of the API is loaded before the path is chosen. Only call it once
 * {@code jdk.incubator.vector} is known to be readable.
 */
final class VectorProbe {
    private VectorProbe() {
    }

    /** Bits of the platform's preferred float species (512 with AVX-512, 256 with AVX2). */
    static int preferredBits() {
        return FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }
}
