package io.github.attn4j.internal.kernel;

/**
 * The two products of one attention tile as {@link AttentionTile#online} runs them, on the active
 * micro-kernel, for benchmarks of the micro-kernel alone (jmh's {@code TileProductBenchmark}):
 * the time the attention core spends outside them is its total minus theirs. Not for use outside
 * this library and its benchmarks.
 */
public final class TileProducts {
    private TileProducts() {
    }

    /** Query rows per tile. */
    public static int queryRows() {
        return AttentionKernel.BQ;
    }

    /** Keys per tile. */
    public static int keys() {
        return AttentionKernel.BK;
    }

    /** Columns of a packed panel. */
    public static int panelWidth() {
        return Kernels.NR;
    }

    /**
     * Scores of a full tile: {@code s[r * BK + j] = q[r * d + ·] · key j}, {@code queryRows()} rows
     * of depth d, the keys in {@code BK / NR} panels of {@code NR x d} (depth-major), one
     * {@link MicroKernel#blocks} call per MR rows.
     */
    public static void scores(float[] q, int d, float[] keyPanels, float[] s) {
        int bk = AttentionKernel.BK;
        int nr = Kernels.NR;
        for (int ir = 0; ir < AttentionKernel.BQ; ir += Kernels.MR) {
            Kernels.MICRO.blocks(d, q, ir * d, d, keyPanels, 0, nr * d, bk / nr, s, ir * bk, bk, Kernels.MR, nr, false);
        }
    }

    /**
     * {@code o += p · values} for a full tile: {@code queryRows()} weight rows of {@code BK},
     * values in {@code dvPad / NR} panels of {@code NR x BK}, {@code o} rows {@code dvPad} apart.
     */
    public static void values(float[] p, float[] valuePanels, int dvPad, float[] o) {
        int bk = AttentionKernel.BK;
        int nr = Kernels.NR;
        for (int ir = 0; ir < AttentionKernel.BQ; ir += Kernels.MR) {
            Kernels.MICRO.blocks(bk, p, ir * bk, bk, valuePanels, 0, nr * bk, dvPad / nr, o, ir * dvPad, dvPad, Kernels.MR, nr, true);
        }
    }
}
