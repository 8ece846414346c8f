package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * The two products of one full attention tile, through the very calls {@link AttentionTile#online}
 * makes ({@link KeyValueSource#scores} and {@link KeyValueSource#multiplyValues} on packed
 * {@link KeyValuePanels}), for benchmarks of the products alone (jmh's
 * {@code TileProductBenchmark}): the time the attention core spends outside them is its total
 * minus theirs. Not for use outside this library and its benchmarks.
 */
public final class TileProducts {
    private final KeyValuePanels panels;
    private final KeyValueSource.Tile tile = new KeyValueSource.Tile();
    private final int[] blockKeys = new int[AttentionKernel.BQ / Kernels.MR];
    private float[] query = new float[0];

    /**
     * One key tile and one value tile, {@code keys()} rows each, row-major: {@code keys} of width
     * {@code d}, {@code values} of width {@code dv}.
     */
    public TileProducts(float[] keys, int d, float[] values, int dv) {
        int bk = AttentionKernel.BK;
        panels = new KeyValuePanels(d, dv, bk);
        panels.packFrom(HeadLayout.tokenMajor(keys, 0, 1, bk, 1, d, d), HeadLayout.tokenMajor(values, 0, 1, bk, 1, dv, dv), 0, 0);
        Arrays.fill(blockKeys, bk);
    }

    /** Query rows per tile. */
    public static int queryRows() {
        return AttentionKernel.BQ;
    }

    /** Keys per tile. */
    public static int keys() {
        return AttentionKernel.BK;
    }

    /** Row stride of the output of {@link #values}: the value width rounded up to whole panels. */
    public int outputStride() {
        return panels.dvPad;
    }

    /**
     * Takes {@code queryRows()} query rows {@code q} (row-major, width d) for {@link #scores}, laid
     * out as the core lays out a query tile ({@link KeyValueSource#queryStride}).
     */
    public void query(float[] q) {
        int rows = AttentionKernel.BQ;
        int d = panels.d;
        int lda = panels.queryStride(rows);
        query = new float[rows * lda];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(q, r * d, query, r * lda, d);
        }
    }

    /** Scores {@code s[r * keys() + j]} of the {@link #query} rows against the key tile. */
    public void scores(float[] s) {
        panels.scores(query, AttentionKernel.BQ, 0, AttentionKernel.BK, blockKeys, s, tile);
    }

    /** {@code o += p · values} for {@code queryRows()} weight rows {@code p} of {@code keys()}, {@code o} rows {@link #outputStride} apart. */
    public void values(float[] p, float[] o) {
        panels.multiplyValues(p, 0, AttentionKernel.BK, AttentionKernel.BQ, 0, AttentionKernel.BK, null, o, tile);
    }
}
