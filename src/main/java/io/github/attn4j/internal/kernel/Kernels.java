package io.github.attn4j.internal.kernel;

/**
 * The kernels this JVM runs, chosen once by {@link KernelSelection}: the Vector API micro-kernel
 * and row loops at the selected width, or their scalar counterparts. Both sit behind the same
 * interfaces, {@link MicroKernel}, {@link RowOps} and {@link DecodeOps} (narrow caches' tiles), and
 * everything else in this package is shared. The fields are {@code static final}, so C2 sees a single implementation at every call
 * site and inlines it.
 *
 * <p>The vector classes are reached only through {@link VectorKernels}, which is loaded only on
 * the vector path; a JVM without {@code jdk.incubator.vector} never touches them.
 */
public final class Kernels {
    static final MicroKernel MICRO;
    static final RowOps ROWS;

    static {
        if (KernelSelection.CHOICE.scalar()) {
            MICRO = new ScalarMicroKernel();
            ROWS = new ScalarRowOps();
        } else {
            MICRO = VectorKernels.microKernel();
            ROWS = VectorKernels.rowOps();
        }
    }

    /** Rows of the micro-kernel's register block. */
    static final int MR = MICRO.mr();
    /** Columns of the micro-kernel's register block: the width of every packed B panel. */
    static final int NR = MICRO.nr();
    /** The loops that widen a narrow cache's tiles to float32 (after NR: they work on rows of NR). */
    static final DecodeOps DECODE = KernelSelection.CHOICE.scalar() ? new ScalarDecodeOps() : VectorKernels.decodeOps();

    private Kernels() {
    }

    /** Vector width in bits of the active kernels, 0 on the scalar path. */
    public static int vectorBits() {
        return KernelSelection.CHOICE.bits();
    }

    /** One line saying which kernels run and why, as logged at startup. */
    public static String describe() {
        return KernelSelection.describe(KernelSelection.CHOICE);
    }

    /** Rounds {@code n} up to a multiple of {@code multiple} (both positive). */
    static int roundUp(int n, int multiple) {
        return (n + multiple - 1) / multiple * multiple;
    }
}
