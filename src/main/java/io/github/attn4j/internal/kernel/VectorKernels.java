package io.github.attn4j.internal.kernel;

/**
 * Factory of the vector kernels, the only door from {@link Kernels} to classes that use
 * {@code jdk.incubator.vector}. Loaded only when {@link KernelSelection} chose a vector width.
 */
final class VectorKernels {
    private VectorKernels() {
    }

    static MicroKernel microKernel() {
        return new VectorMicroKernel(KernelSelection.CHOICE.rows());
    }

    static RowOps rowOps() {
        return new VectorRowOps();
    }

    static DecodeOps decodeOps() {
        return new VectorDecodeOps();
    }
}
