package io.github.attn4j.kernel;

import static io.github.attn4j.kernel.Kernels.MR;
import static io.github.attn4j.kernel.Kernels.NR;

/**
 * Scaled dot-product attention over head layouts, tiled so that every product goes through the
 * {@linkplain MicroKernel micro-kernel}.
 *
 * <p>Work is split per (batch, key/value head): its keys are packed once into NR-wide panels
 * and its values into rows padded to a multiple of NR, and every query tile reuses them. With
 * grouped-query attention the query heads that share a key/value head are interleaved into the
 * same tiles (row = (token, head of the group), token-major), so one pass over a key/value tile
 * serves all of them, also for a single decoded token. Per query tile of {@link #BQ} rows:
 * <ul>
 *   <li><b>online softmax</b> (no weights requested): the query tile is copied once, multiplied
 *       by {@code scale · log2 e}, so its score tiles come out of the micro-kernel already in
 *       base-2 units. The key range is walked in tiles of {@link #BK}; each score tile
 *       {@code Q Kᵀ} is masked (biases times {@code log2 e}) and turned into weights
 *       {@code 2^(s - m)} ({@link ExpFloat#exp2}) against a running row maximum {@code m}, and
 *       {@code P V} is added to the output accumulator. The maximum is raised lazily: only when a
 *       tile's maximum exceeds it by more than {@link #LAZY_MAX}, and only then is the
 *       accumulator rescaled, so on most tiles no rescaling happens and weights stay below
 *       {@code 2^LAZY_MAX}. Memory is per tile, never {@code Lq x Lk}. Key tiles above the
 *       causal diagonal or made only of padding are skipped.</li>
 *   <li><b>materialized</b> (weights requested): the full score rows are written into the
 *       caller's {@code (B, H, Lq, Lk)} weights, normalized in place by the fused
 *       scale-mask-softmax, and multiplied by V.</li>
 * </ul>
 * Each output element is reduced in one fixed order whatever the schedule, so results do not
 * depend on how (batch, head, tile) tasks are distributed.
 */
public final class AttentionKernel {
    /** Query rows per tile: a multiple of MR. */
    static final int BQ = 8 * MR;
    /** Keys per tile: a multiple of NR. */
    static final int BK = 4 * NR;
    /**
     * Keys per split when a head has a single query tile (decoding): the key range is cut into
     * splits of this many keys, each computed by one task, and their partial softmax states are
     * merged in split order. The split depends only on the key count, never on the thread count.
     */
    static final int SPLIT = 16 * BK;
    /**
     * The running maximum of a row is raised only when a tile's maximum exceeds it by more than
     * this (base-2 units), so weights never exceed {@code 2^8}: far from overflow for any key
     * count an int can hold, and rescaling of the accumulator becomes rare.
     */
    static final float LAZY_MAX = 8f;
    /** Partial sums per row of the online softmax ({@link RowOps#exp2ShiftAccumulate}). */
    private static final int SUM_LANES = Kernels.ROWS.sumLanes();

    private AttentionKernel() {
    }

    /**
     * What happens to a score between {@code q·k} and the mask: {@code s = scale · q·k}, then
     * {@code cap · tanh(s / cap)} when {@code softcap > 0}; {@code sinks} (null, or one logit per
     * query head) join each row's softmax denominator as {@code exp(sink)}.
     */
    public record Scores(float scale, float softcap, float[] sinks) {
        /** Plain scaled scores: no soft-cap, no sinks. */
        public static Scores scaled(float scale) {
            return new Scores(scale, 0f, null);
        }
    }

    /** SKELETON: {@link #forward(HeadLayout, HeadLayout, HeadLayout, HeadLayout, ScoreMask, float, float[], int)} with score options. */
    public static void forward(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out,
                               ScoreMask mask, Scores scores, float[] weights, int threads) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * SKELETON: attention of {@code q} over per-(batch row, kv head) key/value panels
     * ({@code panels[b * KVH + g]}) that may hold different numbers of keys per batch row
     * (ragged caches); the mask carries each row's query positions.
     */
    public static void forward(HeadLayout q, KeyValuePanels[] panels, int kvHeads, HeadLayout out,
                               ScoreMask mask, Scores scores, int threads) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * {@code out[b, i, h] = softmax(scale * q[b, i, h] · k[b, :, g]ᵀ + mask) · v[b, :, g]} with
     * {@code g = h / (H / KVH)}; when {@code weights} is not null it receives the
     * {@code (B, H, Lq, Lk)} softmax weights, row-major.
     *
     * @throws IllegalArgumentException if the layouts disagree (batch, lengths, widths, head
     *                                  counts, {@code H % KVH}) or {@code weights} has the wrong length
     */
    public static void forward(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out,
                               ScoreMask mask, float scale, float[] weights) {
        forward(q, k, v, out, mask, scale, weights, 1);
    }

    /**
     * As {@link #forward(HeadLayout, HeadLayout, HeadLayout, HeadLayout, ScoreMask, float, float[])}
     * on up to {@code threads} threads. The keys and values of each (batch, kv head) are packed
     * once (a copy the size of k and v) and shared by the tasks of its query heads; all
     * (batch, head, query tile) tasks then run in one parallel pass. Every task is computed start to finish by
     * one thread and partial results are merged in a fixed order, so the result is bit-identical
     * for every thread count.
     *
     * @throws IllegalArgumentException also if {@code threads < 1}
     */
    public static void forward(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out,
                               ScoreMask mask, float scale, float[] weights, int threads) {
        checkShapes(q, k, v, out, weights);
        require(threads >= 1, "threads", "at least 1", threads);
        int groups = k.heads();
        KeyValuePanels[] panels = new KeyValuePanels[q.batch() * groups];
        Parallel.forEach(threads, panels.length, (i, worker) -> {
            panels[i] = new KeyValuePanels(k.width(), v.width(), k.length());
            panels[i].packFrom(k, v, i / groups, i % groups);
        });
        if (panels.length > 0) {
            run(q, panels, groups, out, mask, scale, weights, threads);
        }
    }

    /**
     * Attention of {@code q} over keys and values already packed per (batch, kv head):
     * {@code panels[b * KVH + g]}, all of the same length (a KV cache). All (batch, head, tile,
     * split) tasks run in one parallel pass.
     *
     * @throws IllegalArgumentException if the panels disagree with {@code q} and {@code out}
     */
    public static void forward(HeadLayout q, KeyValuePanels[] panels, int kvHeads, HeadLayout out,
                               ScoreMask mask, float scale, int threads) {
        require(threads >= 1, "threads", "at least 1", threads);
        require(kvHeads > 0 && q.heads() % kvHeads == 0, "kvHeads", "a positive divisor of q.heads = " + q.heads(), kvHeads);
        require(panels.length == q.batch() * kvHeads, "panels", "B * KVH = " + q.batch() * kvHeads, panels.length);
        for (KeyValuePanels p : panels) {
            require(p.d == q.width() && p.dv == out.width() && p.keys == panels[0].keys, "panels",
                    "widths " + q.width() + "/" + out.width() + " and one length", p.d + "/" + p.dv + ", length " + p.keys);
        }
        require(out.batch() == q.batch() && out.heads() == q.heads() && out.length() == q.length(), "out",
                "the batch, heads and length of q", out.batch() + "/" + out.heads() + "/" + out.length());
        if (panels.length > 0) {
            run(q, panels, kvHeads, out, mask, scale, null, threads);
        }
    }

    /**
     * One parallel pass over every (batch, kv head) of {@code panels} ({@code panels[b * KVH + g]}),
     * query tile (of its group's heads together, or of one head when weights are materialized)
     * and key split. Query tiles are handed out last first:
     * under a causal mask they are the longest, and starting them first evens out the threads.
     */
    private static void run(HeadLayout q, KeyValuePanels[] panels, int kvHeads,
                            HeadLayout out, ScoreMask mask, float scale, float[] weights, int threads) {
        int perGroup = q.heads() / kvHeads;
        // Online tiles take the rows of all query heads of a group together (GQA), so one pass
        // over a key/value tile serves them all; materialized weights are written head by head.
        int fold = weights == null ? perGroup : 1;
        int units = perGroup / fold;
        int unitRows = q.length() * fold;
        int keys = panels[0].keys;
        int queryTiles = (unitRows + BQ - 1) / BQ;
        int splits = weights == null && queryTiles == 1 ? Math.max(1, (keys + SPLIT - 1) / SPLIT) : 1;
        int perPanel = units * queryTiles * splits;
        int tasks = panels.length * perPanel;
        int dvPad = panels[0].dvPad;
        Partials partials = splits > 1 ? new Partials(tasks, Math.min(BQ, unitRows), dvPad) : null;
        int d = panels[0].d;
        TileState[] states = new TileState[Parallel.workers(threads, tasks)];
        Parallel.forEach(threads, tasks, (task, worker) -> {
            TileState ts = states[worker] == null ? (states[worker] = new TileState(d, dvPad, weights == null)) : states[worker];
            int panel = task / perPanel;
            int rest = task % perPanel;
            int b = panel / kvHeads;
            int g = panel % kvHeads;
            int unit = rest / (queryTiles * splits);
            int i0 = (queryTiles - 1 - rest / splits % queryTiles) * BQ;
            int split = rest % splits;
            TileRows tile = new TileRows(b, g * perGroup + unit * fold, fold, i0, Math.min(BQ, unitRows - i0));
            KeyValuePanels kv = panels[panel];
            if (weights != null) {
                materializedTile(q, out, mask, scale, kv, ts, weights, tile);
            } else if (partials == null) {
                onlineTile(q, mask, scale, kv, ts, tile, 0, kv.keys);
                finish(ts, tile.rows(), dvPad);
                store(out, ts.acc, dvPad, tile);
            } else {
                onlineTile(q, mask, scale, kv, ts, tile, split * SPLIT, Math.min(kv.keys, (split + 1) * SPLIT));
                partials.save(task, ts, tile.rows());
            }
        });
        if (partials != null) {
            for (int first = 0; first < tasks; first += splits) {
                int panel = first / perPanel;
                int hBase = panel % kvHeads * perGroup + first % perPanel / splits * fold;
                partials.merge(first, splits, out, new TileRows(panel / kvHeads, hBase, fold, 0, unitRows));
            }
        }
    }

    /**
     * Rows of a query tile of batch {@code b}: row r is token {@code (i0 + r) / fold} of head
     * {@code hBase + (i0 + r) % fold}, so with {@code fold} heads of one group the rows run
     * token-major over those heads, and with {@code fold = 1} they are tokens of head hBase.
     */
    private record TileRows(int b, int hBase, int fold, int i0, int rows) {
        int token(int r) {
            return (i0 + r) / fold;
        }

        int head(int r) {
            return hBase + (i0 + r) % fold;
        }

        /** Whether the mask's key padding masks keys {@code [j0, j1)} for every head of this tile. */
        boolean allMasked(ScoreMask mask, int j0, int j1) {
            for (int r = 0; r < Math.min(rows, fold); r++) {
                if (!mask.masksAllKeys(b, head(r), j0, j1)) {
                    return false;
                }
            }
            return true;
        }

        /** Whether the mask's keep and bias sources change no score of this tile's heads for keys {@code [j0, j1)}. */
        boolean keepsAllKeys(ScoreMask mask, int j0, int j1) {
            for (int r = 0; r < Math.min(rows, fold); r++) {
                if (!mask.keepsAllKeys(b, head(r), j0, j1)) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Runs the online softmax of the tile's rows over keys {@code [from, to)}, leaving the
     * unnormalized output, row maxima and partial row sums in {@code ws}.
     */
    private static void onlineTile(HeadLayout q, ScoreMask mask, float scale, KeyValuePanels kv, TileState ws,
                                   TileRows tile, int from, int to) {
        int b = tile.b();
        int rows = tile.rows();
        int keys = kv.keys;
        int dvPad = kv.dvPad;
        int d = kv.d;
        float[] s = ws.scores;
        float[] o = ws.acc;
        float[] qs = ws.query;
        float qScale = scale * ExpFloat.LOG2E;
        packQuery(q, tile, qScale, qs, d);
        java.util.Arrays.fill(o, 0, rows * dvPad, 0f);
        java.util.Arrays.fill(ws.rowMax, Float.NEGATIVE_INFINITY);
        java.util.Arrays.fill(ws.rowSum, 0f);

        boolean sources = mask.hasSources();
        int keyEnd = Math.min(to, mask.keyLimit(tile.token(rows - 1), keys));
        for (int j0 = from; j0 < keyEnd; j0 += BK) {
            int nk = Math.min(BK, keyEnd - j0);
            if (tile.allMasked(mask, j0, j0 + nk)) {
                continue;
            }
            // Keys each MR-row block may attend: on a causal diagonal tile the early blocks stop sooner.
            int[] blockKeys = ws.blockKeys;
            for (int ir = 0; ir < rows; ir += MR) {
                int last = Math.min(rows, ir + MR) - 1;
                blockKeys[ir / MR] = Math.max(0, Math.min(nk, mask.keyLimit(tile.token(last), keys) - j0));
            }
            packedScoreTile(qs, kv, rows, j0, blockKeys, s);
            boolean masked = sources && !tile.keepsAllKeys(mask, j0, j0 + nk);
            for (int r = 0; r < rows; r++) {
                int off = r * BK;
                int n = Math.max(0, Math.min(nk, mask.keyLimit(tile.token(r), keys) - j0));
                if (masked) {
                    mask.apply(s, off, n, b, tile.head(r), tile.token(r), j0, ExpFloat.LOG2E);
                }
                float oldMax = ws.rowMax[r];
                float newMax = oldMax;
                // The maximum is only needed when the row has none yet or this tile exceeds it by more
                // than LAZY_MAX. A NaN score is not seen here; its weight is NaN and spreads to the row.
                if (n > 0 && (oldMax == Float.NEGATIVE_INFINITY || Kernels.ROWS.anyAbove(s, off, n, oldMax + LAZY_MAX))) {
                    newMax = Math.max(oldMax, Kernels.ROWS.max(s, off, n));
                }
                if (newMax == Float.NEGATIVE_INFINITY) {
                    Softmax.fill(s, off, nk, 0f);
                    continue;
                }
                if (newMax != oldMax && oldMax != Float.NEGATIVE_INFINITY) {
                    float correction = ExpFloat.exp2(oldMax - newMax);
                    Kernels.ROWS.scale(o, r * dvPad, dvPad, correction);
                    Kernels.ROWS.scale(ws.rowSum, r * SUM_LANES, SUM_LANES, correction);
                }
                Kernels.ROWS.exp2ShiftAccumulate(s, off, n, newMax, ws.rowSum, r * SUM_LANES);
                Softmax.fill(s, off + n, nk - n, 0f);
                ws.rowMax[r] = newMax;
            }
            multiplyValues(kv, s, 0, BK, rows, j0, nk, blockKeys, o);
        }
    }

    /** Divides each output row by its softmax sum (rows with nothing to attend stay 0). */
    private static void finish(TileState ws, int rows, int dvPad) {
        for (int r = 0; r < rows; r++) {
            float l = ws.total(r);
            Kernels.ROWS.scale(ws.acc, r * dvPad, dvPad, l > 0f ? 1f / l : 0f);
        }
    }

    private static void materializedTile(HeadLayout q, HeadLayout out, ScoreMask mask, float scale,
                                         KeyValuePanels kv, TileState ws, float[] weights, TileRows tile) {
        int b = tile.b();
        int h = tile.hBase();
        int i0 = tile.i0();
        int rows = tile.rows();
        int keys = kv.keys;
        int base = ((b * q.heads() + h) * q.length() + i0) * keys;
        scoreTile(q.data(), q.at(b, i0, h), q.rowStride(), kv, rows, 0, keys, weights, base, keys);
        Softmax.scaleMaskRows(weights, base, rows, keys, keys, mask, b, h, i0, scale);
        java.util.Arrays.fill(ws.acc, 0, rows * kv.dvPad, 0f);
        multiplyValues(kv, weights, base, keys, rows, 0, keys, null, ws.acc);
        store(out, ws.acc, kv.dvPad, tile);
    }

    /**
     * Copies the tile's query rows into {@code qs} in the micro-kernel's packed A layout (MR-row
     * micro-panels, the MR values of one reduction step side by side: row r, column c at
     * {@code (r / MR) * MR * d + c * MR + r % MR}), multiplied by {@code qScale}.
     */
    private static void packQuery(HeadLayout q, TileRows tile, float qScale, float[] qs, int d) {
        float[] data = q.data();
        for (int r = 0; r < tile.rows(); r++) {
            int src = q.at(tile.b(), tile.token(r), tile.head(r));
            int dst = r / MR * MR * d + r % MR;
            for (int c = 0; c < d; c++) {
                qs[dst + c * MR] = data[src + c] * qScale;
            }
        }
    }

    /**
     * Scores of the packed query tile {@code qs} against keys {@code [j0, j0 + blockKeys[ir / MR])}
     * for each MR-row block {@code ir} into {@code s} (row stride BK).
     */
    private static void packedScoreTile(float[] qs, KeyValuePanels kv, int rows, int j0, int[] blockKeys, float[] s) {
        int d = kv.d;
        int first = j0 / NR * NR * d;
        for (int ir = 0; ir < rows; ir += MR) {
            int mr = Math.min(MR, rows - ir);
            int nk = blockKeys[ir / MR];
            for (int jr = 0; jr < nk; jr += NR) {
                Kernels.MICRO.packedBlock(d, qs, ir * d, kv.keyPanels, first + jr * d,
                        s, ir * BK + jr, BK, mr, Math.min(NR, nk - jr), false);
            }
        }
    }

    /**
     * Scores of {@code rows} query rows ({@code a[aOff + r * lda ...]}) against keys
     * {@code j0..j0+nk)} into {@code c[cOff...]} (row stride ldc).
     */
    private static void scoreTile(float[] a, int aOff, int lda, KeyValuePanels kv, int rows,
                                  int j0, int nk, float[] c, int cOff, int ldc) {
        int d = kv.d;
        int panels = (nk + NR - 1) / NR;
        int lastNr = nk - (panels - 1) * NR;
        for (int ir = 0; ir < rows; ir += MR) {
            Kernels.MICRO.blocks(d, a, aOff + ir * lda, lda, kv.keyPanels, j0 / NR * NR * d, NR * d, panels,
                    c, cOff + ir * ldc, ldc, Math.min(MR, rows - ir), lastNr, false);
        }
    }

    /**
     * {@code o[rows x dvPad] += p[rows x nk] · values[j0..j0+nk)}. A key whose weight is exactly
     * 0 contributes nothing, even when its value row holds NaN or an infinity (where {@code 0 · NaN}
     * would be NaN): such tiles, flagged when packing, take {@link #multiplyValuesSkippingZeros}.
     * When {@code blockKeys} is not null, MR-row block {@code ir} stops after
     * {@code blockKeys[ir / MR]} keys, whose weights beyond are all 0.
     */
    private static void multiplyValues(KeyValuePanels kv, float[] p, int pOff, int ldp, int rows, int j0, int nk,
                                       int[] blockKeys, float[] o) {
        if (kv.hasNonFiniteValues(j0, j0 + nk)) {
            multiplyValuesSkippingZeros(kv, p, pOff, ldp, rows, j0, nk, o);
            return;
        }
        int dvPad = kv.dvPad;
        for (int ir = 0; ir < rows; ir += MR) {
            int kc = blockKeys == null ? nk : blockKeys[ir / MR];
            if (kc == 0) {
                continue;
            }
            Kernels.MICRO.blocks(kc, p, pOff + ir * ldp, ldp, kv.valuePanels, j0 * NR, NR * kv.capacity, dvPad / NR,
                    o, ir * dvPad, dvPad, Math.min(MR, rows - ir), NR, true);
        }
    }

    /**
     * The same product one element at a time, leaving out zero weights. Each element is still one
     * chain of fused multiply-adds in increasing key order added to {@code o}, like the
     * micro-kernel, so finite values give the same bits as the fast path.
     */
    private static void multiplyValuesSkippingZeros(KeyValuePanels kv, float[] p, int pOff, int ldp, int rows,
                                                    int j0, int nk, float[] o) {
        int dvPad = kv.dvPad;
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < dvPad; c++) {
                int panel = c / NR * NR * kv.capacity + c % NR;
                float acc = 0f;
                for (int j = 0; j < nk; j++) {
                    float w = p[pOff + r * ldp + j];
                    if (w != 0f) {
                        acc = Math.fma(w, kv.valuePanels[panel + (j0 + j) * NR], acc);
                    }
                }
                o[r * dvPad + c] += acc;
            }
        }
    }

    private static void store(HeadLayout out, float[] o, int dvPad, TileRows tile) {
        for (int r = 0; r < tile.rows(); r++) {
            System.arraycopy(o, r * dvPad, out.data(), out.at(tile.b(), tile.token(r), tile.head(r)), out.width());
        }
    }

    private static void checkShapes(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out, float[] weights) {
        require(k.batch() == q.batch() && v.batch() == q.batch() && out.batch() == q.batch(), "batch",
                "q, k, v and out to share batch " + q.batch(),
                "k " + k.batch() + ", v " + v.batch() + ", out " + out.batch());
        require(k.width() == q.width(), "k.width", "q.width = " + q.width(), k.width());
        require(v.length() == k.length(), "v.length", "k.length = " + k.length(), v.length());
        require(v.heads() == k.heads(), "v.heads", "k.heads = " + k.heads(), v.heads());
        require(k.heads() > 0 ? q.heads() % k.heads() == 0 : q.heads() == 0, "q.heads",
                "a multiple of k.heads = " + k.heads(), q.heads());
        require(out.heads() == q.heads() && out.length() == q.length() && out.width() == v.width(), "out",
                "heads " + q.heads() + ", length " + q.length() + ", width " + v.width(),
                "heads " + out.heads() + ", length " + out.length() + ", width " + out.width());
        if (weights != null) {
            long expected = (long) q.batch() * q.heads() * q.length() * k.length();
            require(weights.length == expected, "weights", "length B*H*Lq*Lk = " + expected, weights.length);
        }
    }

    private static void require(boolean ok, String name, String expected, Object actual) {
        if (!ok) {
            throw new IllegalArgumentException(name + ": expected " + expected + ", got " + actual);
        }
    }

    /**
     * One worker's state for a query tile: the scaled query rows and score tile (online softmax
     * only), output accumulator, running max and sum per row.
     */
    private static final class TileState {
        final float[] query;
        /** Keys each MR-row block of the current key tile may attend. */
        final int[] blockKeys;
        final float[] scores;
        final float[] acc;
        final float[] rowMax = new float[BQ];
        /** {@link #SUM_LANES} partial sums per row. */
        final float[] rowSum = new float[BQ * SUM_LANES];

        TileState(int d, int dvPad, boolean online) {
            this.query = new float[online ? BQ * d : 0];
            this.blockKeys = new int[BQ / MR];
            this.scores = new float[online ? BQ * BK : 0];
            this.acc = new float[BQ * dvPad];
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

    /**
     * The partial softmax states of split tasks: for task t, the unnormalized output rows, row
     * maxima and row sums over its split of the keys, merged in split order by {@link #merge}.
     */
    private static final class Partials {
        final int rowsMax;
        final int dvPad;
        final float[] acc;
        final float[] max;
        final float[] sum;

        Partials(int tasks, int rowsMax, int dvPad) {
            this.rowsMax = rowsMax;
            this.dvPad = dvPad;
            this.acc = new float[tasks * rowsMax * dvPad];
            this.max = new float[tasks * rowsMax];
            this.sum = new float[tasks * rowsMax];
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
         * {@code f = 2^(m - M)} per split (the maxima are in base-2 units),
         * output = Σ f·acc / Σ f·sum, summed in split order.
         */
        void merge(int first, int splits, HeadLayout out, TileRows tile) {
            float[] row = new float[dvPad];
            for (int r = 0; r < tile.rows(); r++) {
                float m = Float.NEGATIVE_INFINITY;
                for (int s = 0; s < splits; s++) {
                    m = Math.max(m, max[(first + s) * rowsMax + r]);
                }
                java.util.Arrays.fill(row, 0f);
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
                }
                Kernels.ROWS.scale(row, 0, dvPad, total > 0f ? 1f / total : 0f);
                System.arraycopy(row, 0, out.data(), out.at(tile.b(), tile.token(r), tile.head(r)), out.width());
            }
        }
    }
}
