package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * Scaled dot-product attention over head layouts: the task scheduler around the
 * {@linkplain AttentionTile tile kernel}.
 *
 * <p>Work is split per (batch row, key/value head): its keys and values come from one
 * {@link KeyValueSource} (packed once per call from head layouts, or a cache's own panels), and
 * every query tile reads them. With grouped-query attention the query heads that share a
 * key/value head are interleaved into the same tiles (row = (token, head of the group),
 * token-major), so one pass over a key/value tile serves all of them, also for a single decoded
 * token. Tasks are (source, unit of heads, query tile, key split): when a source has a single
 * query tile (decoding), its key range is cut into splits of {@link #SPLIT} keys, each computed
 * by one task, and their partial softmax states are merged in split order. Splits depend only on
 * the keys and the mask, never on the thread count, and every output element is reduced in one
 * fixed order, so results do not depend on how tasks are distributed.
 *
 * <p>Sources may hold different numbers of keys per batch row (a ragged cache); each row then
 * costs what its own keys cost.
 */
public final class AttentionKernel {
    /**
     * Query rows per tile: a multiple of every MR (4, 6 and 12). With twelve-row register blocks,
     * 96-row tiles measured the same as 48 (within 4%, both ways, in SideBySide), and so did 24
     * (session 24), which halves the tile's footprint in L1.
     */
    static final int BQ = 48;
    /**
     * Keys per tile, on every path: a multiple of every NR (8, 16, 32). Each step up halved the
     * fixed costs per tile (the value product's loads and stores of the output rows, the tile
     * loop's range and mask checks, the short exponential runs, the calls into the products):
     * from 64 to 128 keys the unmasked attention took 1 to 16% less time on the 256-bit path
     * (jmh/README.md, "Attention core"), from 128 to 256 1 to 5% less on the 512-bit path (5 to 7%
     * in a two-thread call at L = 1024; jmh/README.md, "Key tiles of 256 keys"), although a tile's
     * scores (BQ x BK floats, 48 KiB) and keys no longer fit in L1 beside each other.
     */
    static final int BK = 256;
    /**
     * Sources per thread from which each source is one task on more than one thread, whatever
     * the remainder: the tasks claimed last then leave a thread idle for at most a small part of
     * the call. With fewer sources, see {@link #chunksPerSource}.
     */
    static final int PACK_IN_TASK = 16;
    /**
     * Fewest query tiles per chunk when a source is cut into chunks of tiles, each packing its own
     * copy of the source's keys and values: packing a source costs about half a tile's products,
     * so a chunk of four tiles pays at most about 12% more.
     */
    static final int MIN_CHUNK_TILES = 4;
    /**
     * Most query tiles per chunk: with few long tasks (8 heads at L = 8192: 8 of 171 tiles) a core
     * that runs slower for a while (shared, hybrid) leaves the other idle for up to a whole task
     * at the end of the call. Chunks of at most 32 tiles pay at most about 2% more packing.
     */
    static final int MAX_CHUNK_TILES = 32;
    /** Keys per split when a source has a single query tile (decoding): 2048, eight key tiles. */
    static final int SPLIT = 8 * BK;
    /**
     * The running maximum of a row is raised only when a tile's maximum exceeds it by more than
     * this (base-2 units), so weights never exceed {@code 2^8}: far from overflow for any key
     * count an int can hold, and rescaling of the accumulator becomes rare.
     */
    static final float LAZY_MAX = 8f;
    /**
     * Multiply-adds (query rows times keys times {@code d + dv}, whatever the mask skips) below
     * which a call runs on the calling thread alone: a second thread costs microseconds (a
     * helper to hand the tasks to, and the keys and values a task reads from the other core's
     * cache), more than it saves on less. At 2^21, decode steps of 32 query heads over 8
     * key/value heads of 128 took 1.10 to 1.6x the one-thread time on two threads up to 128
     * tokens and 0.97x at 256 (jmh/README.md, "Lingering helpers"); once their projections used
     * both threads too (a helper then lingers as the attention starts), splitting from 2^20 took
     * steps of 128 to 192 tokens to 0.85 to 0.95x the time, while an 8-head call of exactly 2^20
     * (32 queries, head width 64) took 1.04 to 1.06x and one of 40 queries 0.78 to 0.94x
     * (jmh/README.md, "Decode projections: B's bytes count"). Which threads run the tasks never
     * changes a bit. System property {@code attn4j.attentionSplitWork} sets another bound (the
     * forced-path test runs set 0, so that their small shapes still run on every thread count
     * they ask for).
     */
    static final long MIN_SPLIT_WORK = Math.max(0L, Long.getLong("attn4j.attentionSplitWork", 1L << 20));

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

    /**
     * {@code out[b, i, h] = softmax(scores(q[b, i, h] · k[b, :, g]ᵀ) + mask) · v[b, :, g]} with
     * {@code g = h / (H / KVH)}, on up to {@code threads} threads; when {@code weights} is not
     * null it receives the {@code (B, H, Lq, Lk)} softmax weights, row-major. The keys and values
     * of each (batch, kv head) are packed by the tasks that run its query tiles, into their
     * worker's panels ({@link #packedInTask}), or, when that would leave threads idle (see
     * {@link #chunksPerSource}) or the weights are kept, all first (a copy the size of k and v)
     * and shared by every task. The result is bit-identical for every thread count. Batch row {@code b} of the
     * layouts reads row {@code firstBatch + b} of {@code mask}, so a call over a chunk of a batch
     * reads the whole batch's mask.
     *
     * @throws IllegalArgumentException if the layouts disagree (batch, lengths, widths, head
     *                                  counts, {@code H % KVH}), {@code weights} has the wrong length,
     *                                  the mask has no rows {@code [firstBatch, firstBatch + B)},
     *                                  or {@code threads < 1}
     */
    public static void forward(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out,
                               ScoreMask mask, int firstBatch, Scores scores, float[] weights, int threads) {
        checkShapes(q, k, v, out, weights);
        if (threads < 1) {
            throw invalid("threads", "at least 1", threads);
        }
        if (firstBatch < 0 || firstBatch > mask.rows() - q.batch()) {
            throw invalid("firstBatch", "a first row of " + q.batch() + " among the mask's " + mask.rows(),
                    firstBatch);
        }
        int groups = k.heads();
        int sources = q.batch() * groups;
        if (sources == 0 || q.heads() == 0) {
            return;     // nothing to attend, or no query heads (any number of key/value heads divides 0)
        }
        threads = worthThreads((double) q.batch() * q.heads() * q.length() * k.length() * (k.width() + v.width()), threads);
        int chunks = weights == null ? chunksPerSource(sources, threads, foldedQueryTiles(q, groups)) : 0;
        if (chunks > 0) {
            packedInTask(q, k, v, out, mask, firstBatch, scores, threads, sources, chunks);
            return;
        }
        KeyValuePanels[] panels = AttentionWorkspace.current().panels(sources, k.width(), v.width(), k.length());
        Parallel.forEach(threads, sources, (i, worker) -> panels[i].packFrom(k, v, i / groups, i % groups));
        run(q, java.util.Arrays.copyOf(panels, sources, KeyValueSource[].class), groups, out, mask, firstBatch,
                scores, weights, threads);
    }

    /**
     * {@link #forward(HeadLayout, HeadLayout, HeadLayout, HeadLayout, ScoreMask, Scores, float[], int)}
     * with tasks that pack a source's keys and values into their worker's own panels and run its
     * query tiles right away, while the panels are in that core's cache. Each source is cut into
     * {@code chunks} tasks (tiles {@code c, c + chunks, ...} for chunk c, so each chunk gets
     * early and late tiles of a causal mask alike); a worker packs a source again only when its
     * panels hold another one. Panels shared by all workers, packed first, are written by one
     * core and read by all, a copy that crosses between cores' caches every call: packing there
     * took 55 µs per source (hd 64, L = 512) against 22 µs here (jmh/README.md, "Two threads:
     * packing in the task"). Only without splits (more than one query tile), so every tile is
     * computed exactly as by {@link #run}: the same bits, in another order.
     */
    private static void packedInTask(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out, ScoreMask mask,
                                     int firstBatch, Scores scores, int threads, int sources, int chunks) {
        int tasks = sources * chunks;
        int workers = Parallel.workers(threads, tasks);
        AttentionWorkspace workspace = AttentionWorkspace.current();
        KeyValuePanels[] panels = workspace.panels(workers, k.width(), v.width(), k.length());
        TileState[] states = workspace.states(workers, k.width(), panels[0].dvPad, true);
        float[] sinks = base2(scores.sinks());
        if (workers == 1) {
            // No closure: a chunked module call makes one such call per chunk of its batch.
            for (int p = 0; p < sources; p++) {
                panels[0].packFrom(k, v, p / k.heads(), p % k.heads());
                attendChunk(p, 0, 1, k.heads(), q, out, mask, firstBatch, scores, panels[0], states[0], sinks);
            }
            return;
        }
        int[] held = new int[workers];     // the source each worker's panels hold, -1 for none yet
        Arrays.fill(held, -1);
        Parallel.forEach(threads, tasks, (task, worker) -> {
            int p = task / chunks;
            if (held[worker] != p) {
                panels[worker].packFrom(k, v, p / k.heads(), p % k.heads());
                held[worker] = p;
            }
            attendChunk(p, task % chunks, chunks, k.heads(), q, out, mask, firstBatch, scores, panels[worker],
                    states[worker], sinks);
        });
    }

    /**
     * Chunks per source for {@link #packedInTask} on {@code threads} threads, or 0 when
     * packing every source first for all tasks is the better plan: 1 on one thread or when the
     * sources keep every thread busy ({@link #PACK_IN_TASK} per thread, or a multiple of the
     * thread count, all of them costing about the same, of at most {@link #MAX_CHUNK_TILES} tiles
     * each), else the fewest chunks that do, as long as each keeps {@link #MIN_CHUNK_TILES} query
     * tiles.
     */
    static int chunksPerSource(int sources, int threads, int queryTiles) {
        if (queryTiles <= 1) {
            return 0;
        }
        for (int c = 1; c <= Math.max(1, queryTiles / MIN_CHUNK_TILES); c++) {
            long tasks = (long) sources * c;
            boolean even = tasks % threads == 0 && (queryTiles + c - 1) / c <= MAX_CHUNK_TILES;
            if (threads == 1 || tasks >= (long) PACK_IN_TASK * threads || even) {
                return c;
            }
        }
        return 0;
    }

    /**
     * Query tiles {@code chunk, chunk + chunks, ...} of source {@code p} ({@code groups} kv heads),
     * whose keys and values {@code kv} holds.
     */
    private static void attendChunk(int p, int chunk, int chunks, int groups, HeadLayout q, HeadLayout out,
                                    ScoreMask mask, int firstBatch, Scores scores, KeyValuePanels kv, TileState state,
                                    float[] sinks) {
        int perGroup = q.heads() / groups;
        int queryTiles = foldedQueryTiles(q, groups);
        int unitRows = q.length() * perGroup;
        int b = p / groups;
        for (int t = chunk; t < queryTiles; t += chunks) {
            TileRows tile = state.tile.set(b, firstBatch + b, p % groups * perGroup, perGroup, t * BQ,
                    Math.min(BQ, unitRows - t * BQ));
            AttentionTile.online(q, mask, scores, kv, state, tile, 0, kv.length());
            AttentionTile.finish(out, state, tile, kv.dvPad, sinks);
        }
    }

    /** Query tiles of one key/value head's group of query heads, folded into one unit (no weights kept). */
    private static int foldedQueryTiles(HeadLayout q, int kvHeads) {
        return (q.length() * (q.heads() / kvHeads) + BQ - 1) / BQ;
    }

    /**
     * Attention of {@code q} over keys and values already held per (batch row, kv head), at
     * {@code sources[b * KVH + g]}, which may hold different numbers of keys per batch row (a
     * ragged cache): the mask carries each row's query positions. All (batch, head, tile, split)
     * tasks run in one parallel pass.
     *
     * @throws IllegalArgumentException if the sources disagree with {@code q} and {@code out}
     */
    public static void forward(HeadLayout q, KeyValueSource[] sources, int kvHeads, HeadLayout out,
                               ScoreMask mask, Scores scores, int threads) {
        if (threads < 1) {
            throw invalid("threads", "at least 1", threads);
        }
        if (!(kvHeads > 0 && q.heads() % kvHeads == 0)) {
            throw invalid("kvHeads", "a positive divisor of q.heads = " + q.heads(), kvHeads);
        }
        if (sources.length != q.batch() * kvHeads) {
            throw invalid("sources", "B * KVH = " + q.batch() * kvHeads, sources.length);
        }
        for (KeyValueSource p : sources) {
            if (!(p.d == q.width() && p.dv == out.width())) {
                throw invalid("sources", "widths " + q.width() + "/" + out.width(), p.d + "/" + p.dv);
            }
        }
        if (!(out.batch() == q.batch() && out.heads() == q.heads() && out.length() == q.length())) {
            throw invalid("out", "the batch, heads and length of q",
                    out.batch() + "/" + out.heads() + "/" + out.length());
        }
        if (sources.length > 0 && q.heads() > 0) {
            double keys = 0;
            for (KeyValueSource p : sources) {
                keys += p.length();
            }
            double work = keys * (q.heads() / kvHeads) * q.length() * (q.width() + out.width());
            run(q, sources, kvHeads, out, mask, 0, scores, null, worthThreads(work, threads));
        }
    }

    /** {@code threads}, or 1 for a call of fewer than {@link #MIN_SPLIT_WORK} multiply-adds. */
    static int worthThreads(double work, int threads) {
        return work < MIN_SPLIT_WORK ? 1 : threads;
    }

    /**
     * One parallel pass over every source ({@code sources[b * KVH + g]}), unit of query heads (all
     * heads of a group together, or one head when weights are materialized), query tile and key
     * split. Query tiles are handed out last first: under a causal mask they are the longest, and
     * starting them first evens out the threads.
     */
    private static void run(HeadLayout q, KeyValueSource[] sources, int kvHeads,
                            HeadLayout out, ScoreMask mask, int firstBatch, Scores scores, float[] weights,
                            int threads) {
        int perGroup = q.heads() / kvHeads;
        int fold = weights == null ? perGroup : 1;
        int units = perGroup / fold;
        int unitRows = q.length() * fold;
        int queryTiles = (unitRows + BQ - 1) / BQ;
        // Per source: its first split's key, its number of splits, its first task.
        int[] splitBase = new int[sources.length];
        int[] splits = new int[sources.length];
        int[] firstTask = new int[sources.length + 1];
        boolean anySplit = false;
        TileRows whole = new TileRows();     // a source's rows all at once, on this thread
        for (int p = 0; p < sources.length; p++) {
            splits[p] = 1;
            if (weights == null && queryTiles == 1) {
                TileRows all = whole.set(p / kvHeads, firstBatch + p / kvHeads, 0, fold, 0, unitRows);
                int first = Math.min(all.firstKey(mask), sources[p].length()) / BK * BK;
                int end = all.endKey(mask, sources[p].length());
                splitBase[p] = first;
                splits[p] = Math.max(1, (end - first + SPLIT - 1) / SPLIT);
                anySplit |= splits[p] > 1;
            }
            firstTask[p + 1] = Math.addExact(firstTask[p], units * queryTiles * splits[p]);
        }
        int tasks = firstTask[sources.length];
        int dvPad = sources[0].dvPad;
        AttentionWorkspace workspace = AttentionWorkspace.current();
        Partials partials = anySplit ? workspace.partials(tasks, Math.min(BQ, unitRows), dvPad) : null;
        float[] sinks = base2(scores.sinks());
        TileState[] states = workspace.states(Parallel.workers(threads, tasks), sources[0].d, dvPad, weights == null);
        Parallel.forEach(threads, tasks, (task, worker) -> {
            TileState ts = states[worker];
            int p = sourceOf(firstTask, task);
            int rest = task - firstTask[p];
            int n = splits[p];
            int unit = rest / (queryTiles * n);
            int i0 = (queryTiles - 1 - rest / n % queryTiles) * BQ;
            int split = rest % n;
            TileRows tile = ts.tile.set(p / kvHeads, firstBatch + p / kvHeads, p % kvHeads * perGroup + unit * fold,
                    fold, i0, Math.min(BQ, unitRows - i0));
            KeyValueSource kv = sources[p];
            if (weights != null) {
                AttentionTile.materialized(q, out, mask, scores, kv, ts, weights, tile);
            } else if (n == 1) {
                AttentionTile.online(q, mask, scores, kv, ts, tile, 0, kv.length());
                AttentionTile.finish(out, ts, tile, dvPad, sinks);
            } else {
                int from = splitBase[p] + split * SPLIT;
                AttentionTile.online(q, mask, scores, kv, ts, tile, from, Math.min(kv.length(), from + SPLIT));
                partials.save(task, ts, tile.rows());
            }
        });
        if (partials != null) {
            float[] row = new float[dvPad];
            for (int p = 0; p < sources.length; p++) {
                for (int unit = 0; unit < units && splits[p] > 1; unit++) {
                    TileRows tile = whole.set(p / kvHeads, firstBatch + p / kvHeads,
                            p % kvHeads * perGroup + unit * fold, fold, 0, unitRows);
                    partials.merge(firstTask[p] + unit * splits[p], splits[p], out, tile, sinks, row);
                }
            }
        }
    }

    /** The source whose tasks include {@code task}: the last p with {@code firstTask[p] <= task}. */
    private static int sourceOf(int[] firstTask, int task) {
        int p = Arrays.binarySearch(firstTask, task);
        if (p < 0) {
            return -p - 2;
        }
        while (firstTask[p + 1] == task) {
            p++;      // sources with no task share their first index with the next one
        }
        return p;
    }

    /** Sink logits in the online softmax's base-2 units, or null. */
    private static float[] base2(float[] sinks) {
        if (sinks == null) {
            return null;
        }
        float[] s = new float[sinks.length];
        for (int h = 0; h < s.length; h++) {
            s[h] = sinks[h] * ExpFloat.LOG2E;
        }
        return s;
    }

    private static void checkShapes(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out, float[] weights) {
        if (!(k.batch() == q.batch() && v.batch() == q.batch() && out.batch() == q.batch())) {
            throw invalid("batch", "q, k, v and out to share batch " + q.batch(),
                    "k " + k.batch() + ", v " + v.batch() + ", out " + out.batch());
        }
        if (k.width() != q.width()) {
            throw invalid("k.width", "q.width = " + q.width(), k.width());
        }
        if (v.length() != k.length()) {
            throw invalid("v.length", "k.length = " + k.length(), v.length());
        }
        if (v.heads() != k.heads()) {
            throw invalid("v.heads", "k.heads = " + k.heads(), v.heads());
        }
        if (!(k.heads() > 0 ? q.heads() % k.heads() == 0 : q.heads() == 0)) {
            throw invalid("q.heads", "a multiple of k.heads = " + k.heads(), q.heads());
        }
        if (!(out.heads() == q.heads() && out.length() == q.length() && out.width() == v.width())) {
            throw invalid("out", "heads " + q.heads() + ", length " + q.length() + ", width " + v.width(),
                    "heads " + out.heads() + ", length " + out.length() + ", width " + out.width());
        }
        if (weights != null) {
            long expected = (long) q.batch() * q.heads() * q.length() * k.length();
            if (weights.length != expected) {
                throw invalid("weights", "length B*H*Lq*Lk = " + expected, weights.length);
            }
        }
    }

    /** The error of a failed argument check; its message is only built when a check fails. */
    private static IllegalArgumentException invalid(String name, String expected, Object actual) {
        return new IllegalArgumentException(name + ": expected " + expected + ", got " + actual);
    }
}
