package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.AttentionKernel.BK;
import static io.github.attn4j.internal.kernel.AttentionKernel.BQ;
import static io.github.attn4j.internal.kernel.Kernels.MR;

/**
 * One worker's scratch for query tiles, reused across the tiles it runs: the scaled query rows
 * (row-major) and score tile (online softmax only), the output accumulator, running maximum and partial
 * sums per row, and the key and value tiles handed out by the {@link KeyValueSource}.
 */
final class TileState {
    /** Partial sums per row of the online softmax ({@link RowOps#exp2ShiftAccumulateRows}). */
    static final int SUM_LANES = Kernels.ROWS.sumLanes();

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

    private final int d;
    private final int dvPad;

    TileState(int d, int dvPad, boolean online) {
        this.d = d;
        this.dvPad = dvPad;
        this.query = new float[online ? BQ * d : 0];
        this.scores = new float[online ? BQ * BK : 0];
        this.acc = new float[BQ * dvPad];
    }

    /** Whether this state serves tiles of key width {@code d} and padded value width {@code dvPad}. */
    boolean fits(int d, int dvPad, boolean online) {
        return this.d == d && this.dvPad == dvPad && (!online || scores.length > 0);
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
