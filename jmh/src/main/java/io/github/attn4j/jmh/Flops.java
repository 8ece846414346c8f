package io.github.attn4j.jmh;

/** Floating-point operation counts behind the GFLOP/s figures. */
public final class Flops {
    private Flops() {
    }

    /**
     * Multi-head attention forward pass: four {@code (B·L x E)·(E x E)} projections,
     * {@code 8·B·L·E²}, plus scores and weighted values, {@code 4·B·L²·E}. Masks do not change
     * the count, so skipped tiles show up as a higher effective rate.
     */
    public static double attention(long batch, long seqLen, long embedDim) {
        return 8.0 * batch * seqLen * embedDim * embedDim + scoresAndValues(batch, seqLen, embedDim);
    }

    /**
     * The attention between the projections, over all heads of total width {@code embedDim}:
     * scores {@code Q·Kᵀ} and weighted values {@code P·V}, {@code 4·B·L²·E}, whatever the mask.
     */
    public static double scoresAndValues(long batch, long seqLen, long embedDim) {
        return 4.0 * batch * seqLen * seqLen * embedDim;
    }

    /** {@code C (m x n) = A (m x k) · B (k x n)}: {@code 2·m·n·k}. */
    public static double gemm(long m, long n, long k) {
        return 2.0 * m * n * k;
    }
}
