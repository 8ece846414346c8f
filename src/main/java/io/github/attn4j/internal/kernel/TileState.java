package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.AttentionKernel.BK;
import static io.github.attn4j.internal.kernel.AttentionKernel.BQ;
import static io.github.attn4j.internal.kernel.Kernels.MR;

/**
 * One worker's scratch for query tiles, reused across the tiles it runs: the scaled query rows
 * (row-major, {@link KeyValueSource#queryStride} apart) and score tile (online softmax only), the output accumulator, running maximum and partial
 * sums per row, and the key and value tiles handed out by the {@link KeyValueSource}.
 */
final class TileState {
    /** Partial sums per row of the online softmax ({@link RowOps#exp2ShiftAccumulateRows}). */
    static final int SUM_LANES = Kernels.ROWS.sumLanes();
    /**
     * Key tiles whose scores {@link AttentionTile#online} computes ahead of their softmax when a
     * query tile has at most {@link #AHEAD_ROWS} rows: a decode split
     * ({@link AttentionKernel#SPLIT}, 2048 keys). Reading keys and values in runs of 8 tiles of
     * 128 keys instead of 1 took 0.75x the time from memory, 16 tiles 0.74x, all of them 0.72x
     * (jmh/README.md, "Keys ahead of values").
     */
    static final int AHEAD = AttentionKernel.SPLIT / BK;
    /**
     * Most rows of a query tile whose key tiles are scored ahead: a decode step's query rows per
     * key/value head (4 for Llama 3 8B, 7 for Qwen 2.5 7B, 8 for Llama 3 70B), whatever MR is.
     */
    static final int AHEAD_ROWS = 16;

    final float[] query;
    /** Keys each MR-row block of the current key tile may attend. */
    final int[] blockKeys = new int[BQ / MR];
    /** Each tile row's key range {@code [rowStart, rowEnd)} from the mask. */
    final int[] rowStart = new int[BQ];
    final int[] rowEnd = new int[BQ];
    /** Offset of each tile row in the query layout. */
    final int[] rowOffsets = new int[BQ];
    final float[] scores;
    final float[] acc;
    final float[] rowMax = new float[BQ];
    /** {@link #SUM_LANES} partial sums per row. */
    final float[] rowSum = new float[BQ * SUM_LANES];
    final KeyValueSource.Tile keys = new KeyValueSource.Tile();
    final KeyValueSource.Tile values = new KeyValueSource.Tile();
    /** The rows of the tile this worker is on. */
    final TileRows tile = new TileRows();
    /** First key, key count and {@link #blockKeys} of each tile whose scores were computed ahead. */
    final int[] aheadStart = new int[AHEAD];
    final int[] aheadKeys = new int[AHEAD];
    final int[] aheadBlockKeys = new int[AHEAD * (BQ / MR)];
    /** Score tiles 1 to AHEAD - 1 (tile 0 is {@link #scores}), AHEAD_ROWS rows each, made when first used. */
    private final float[][] aheadScores = new float[AHEAD][];

    private final int d;
    private final int dvPad;

    TileState(int d, int dvPad, boolean online) {
        this.d = d;
        this.dvPad = dvPad;
        this.query = new float[online ? BQ * (KeyValueSource.stridedQueries(d) ? MicroKernel.TILE_STRIDE : d) : 0];
        this.scores = new float[online ? BQ * BK : 0];
        this.acc = new float[BQ * dvPad];
    }

    /** Whether this state serves tiles of key width {@code d} and padded value width {@code dvPad}. */
    boolean fits(int d, int dvPad, boolean online) {
        return this.d == d && this.dvPad == dvPad && (!online || scores.length > 0);
    }

    /**
     * The score tile for the {@code t}-th tile computed ahead: {@link #scores} for the first, an
     * {@link #AHEAD_ROWS}-row tile for the others (so at most {@code (AHEAD - 1) * AHEAD_ROWS * BK}
     * floats more per worker, 120 KiB).
     */
    float[] scoreTile(int t) {
        if (t == 0) {
            return scores;
        }
        float[] s = aheadScores[t];
        if (s == null) {
            aheadScores[t] = s = new float[AHEAD_ROWS * BK];
        }
        return s;
    }

    /** Row r's softmax sum: its partial sums added in index order. */
    float total(int r) {
        float sum = 0f;
        for (int lane = 0; lane < SUM_LANES; lane++) {
            sum += rowSum[r * SUM_LANES + lane];
        }
        return sum;
    }
}
