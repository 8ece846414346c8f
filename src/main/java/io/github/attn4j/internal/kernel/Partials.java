package io.github.attn4j.internal.kernel;

/**
 * The partial softmax states of split tasks: for task t, the unnormalized output rows, row
 * maxima (base 2) and row sums over its split of the keys, merged in split order by
 * {@link #merge}.
 */
final class Partials {
    private final int rowsMax;
    private final int dvPad;
    private final float[] acc;
    private final float[] max;
    private final float[] sum;

    Partials(int tasks, int rowsMax, int dvPad) {
        this.rowsMax = rowsMax;
        this.dvPad = dvPad;
        this.acc = new float[Math.multiplyExact(Math.multiplyExact(tasks, rowsMax), dvPad)];
        this.max = new float[tasks * rowsMax];
        this.sum = new float[tasks * rowsMax];
    }

    /** Whether this holds room for {@code tasks} tasks of {@code rows} rows of exactly {@code dvPad} values. */
    boolean fits(int tasks, int rows, int dvPad) {
        return this.dvPad == dvPad && this.rowsMax == rows && max.length >= tasks * rows;
    }

    void save(int task, TileState ws, int rows) {
        System.arraycopy(ws.acc, 0, acc, task * rowsMax * dvPad, rows * dvPad);
        System.arraycopy(ws.rowMax, 0, max, task * rowsMax, rows);
        for (int r = 0; r < rows; r++) {
            sum[task * rowsMax + r] = ws.total(r);
        }
    }

    /**
     * Merges tasks {@code [first, first + splits)} (one query tile over consecutive key splits)
     * into the tile's output rows: with {@code M} the largest split maximum and
     * {@code f = 2^(m - M)} per split, output = Σ f·acc / (Σ f·sum + 2^(sink - M)), summed in
     * split order; {@code sinks} holds base-2 sink logits per head, or is null.
     */
    void merge(int first, int splits, HeadLayout out, TileRows tile, float[] sinks, float[] row) {
        for (int r = 0; r < tile.rows(); r++) {
            float m = Float.NEGATIVE_INFINITY;
            for (int s = 0; s < splits; s++) {
                m = Math.max(m, max[(first + s) * rowsMax + r]);
            }
            java.util.Arrays.fill(row, 0, dvPad, 0f);
            float total = 0f;
            if (m != Float.NEGATIVE_INFINITY) {
                for (int s = 0; s < splits; s++) {
                    int at = (first + s) * rowsMax + r;
                    if (max[at] == Float.NEGATIVE_INFINITY) {
                        continue;
                    }
                    float f = max[at] == m ? 1f : ExpFloat.exp2(max[at] - m);
                    total += f * sum[at];
                    int base = at * dvPad;
                    for (int c = 0; c < dvPad; c++) {
                        row[c] = Math.fma(f, acc[base + c], row[c]);
                    }
                }
                if (sinks != null) {
                    total += ExpFloat.exp2(sinks[tile.head(r)] - m);
                }
            }
            Kernels.ROWS.scale(row, 0, dvPad, total > 0f ? 1f / total : 0f);
            System.arraycopy(row, 0, out.data(), out.at(tile.b(), tile.token(r), tile.head(r)), out.width());
        }
    }
}
