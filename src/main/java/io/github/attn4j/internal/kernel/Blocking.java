package io.github.attn4j.internal.kernel;

/**
 * Cache block sizes of the BLIS loops in {@link Gemm}: {@code kc} is the depth of a packed block
 * (reduction dimension), {@code mc} the rows of a packed block of A, {@code nc} the columns of a
 * packed block of B.
 *
 * <p>{@link #DEFAULT} is what the public API uses; tests pass tiny block sizes to cross every
 * block boundary with small matrices. See {@link Gemm} for why the default values fit the
 * caches of the target machine.
 *
 * @param kc depth of the packed blocks of A and B, {@code >= 1}
 * @param mc rows of a packed block of A, a positive multiple of {@link Kernels#MR}
 * @param nc columns of a packed block of B, a positive multiple of {@link Kernels#NR}
 * @param nb columns of the group of B micro-panels that each A micro-panel sweeps in turn, a
 *           positive multiple of {@link Kernels#NR}
 * @param depthColumns products over at least this many columns (of one task) pack A's full
 *           micro-panels by depth when the micro-kernel reads them so
 *           ({@link MicroKernel#depthRows}), {@code >= 0}; {@link Integer#MAX_VALUE}: never
 */
record Blocking(int kc, int mc, int nc, int nb, int depthColumns) {
    /**
     * The block sizes tuned for AMD Zen 4 and Zen 5 (1 MiB L2 per core): K up to 768 in one block
     * (BERT-base's width, 512, 384), with the A block and a B group together in L2; A packed by
     * depth for tasks of 768 columns or more (see {@link Gemm}): the fused projections, also
     * when two threads split the one at E = 512 into two 768-column slices (2 to 6% less time
     * than at 1024 on an Intel Xeon, jmh/README.md "A packed by depth from 768 columns").
     */
    static final Blocking DEFAULT = new Blocking(768, 132, 2048, 128, 768);

    Blocking {
        if (kc < 1) {
            throw new IllegalArgumentException("kc must be >= 1, got " + kc);
        }
        if (mc < Kernels.MR || mc % Kernels.MR != 0) {
            throw new IllegalArgumentException("mc must be a positive multiple of MR (" + Kernels.MR
                    + "), got " + mc);
        }
        if (nc < Kernels.NR || nc % Kernels.NR != 0) {
            throw new IllegalArgumentException("nc must be a positive multiple of NR (" + Kernels.NR
                    + "), got " + nc);
        }
        if (nb < Kernels.NR || nb % Kernels.NR != 0) {
            throw new IllegalArgumentException("nb must be a positive multiple of NR (" + Kernels.NR
                    + "), got " + nb);
        }
        if (depthColumns < 0) {
            throw new IllegalArgumentException("depthColumns must be >= 0, got " + depthColumns);
        }
    }
}
