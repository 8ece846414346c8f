package io.github.attn4j.internal.kernel;

import java.util.Arrays;

import static io.github.attn4j.internal.kernel.AttentionKernel.BK;
import static io.github.attn4j.internal.kernel.AttentionKernel.LAZY_MAX;
import static io.github.attn4j.internal.kernel.Kernels.MR;
import static io.github.attn4j.internal.kernel.Kernels.NR;
import static io.github.attn4j.internal.kernel.TileState.SUM_LANES;

/**
 * The tile kernel: one query tile against the keys and values of one {@link KeyValueSource},
 * every product through the {@linkplain MicroKernel micro-kernel}. A score's life is
 * {@code scale · q·k} → soft-cap → ALiBi and additive biases → masked keys and the key range
 * → softmax (with the head's sink in the denominator) → weights · V.
 *
 * <ul>
 *   <li><b>online</b> ({@link #online}): the query tile is gathered once into row-major rows,
 *       multiplied by {@code scale · log2 e} (or {@code scale / cap} under a soft-cap, whose pass
 *       then multiplies by {@code cap · log2 e}), so scores come out in base-2 units. Key tiles of
 *       {@link AttentionKernel#BK} outside every row's key range are never computed; each score
 *       tile becomes weights {@code 2^(s - m)} against a running row maximum {@code m} that is
 *       raised lazily (only when a tile exceeds it by more than {@link AttentionKernel#LAZY_MAX}),
 *       and {@code P V} is added to the accumulator. A tile of at most
 *       {@link TileState#AHEAD_ROWS} rows (a decode step's) has the scores of up to
 *       {@link TileState#AHEAD} key tiles computed before their softmax and values, so keys and
 *       values stream from memory in runs.</li>
 *   <li><b>materialized</b> ({@link #materialized}): the full score rows of one head go into the
 *       caller's weights, are normalized in place and multiplied by V.</li>
 * </ul>
 *
 * <p>Why the scores go through {@link MicroKernel#blocks} on row-major query rows rather than a
 * micro-kernel loop over a query panel packed column by column (the loop the micro-kernel had
 * then): on the 256-bit path (16 vector registers) C2 compiled that loop with one of its twelve
 * accumulators on the stack, a store and reload in every step of the reduction, so the score
 * product ran at about half the rate of the value product ({@code blocks}, no spill) in a perf
 * profile of the unmasked attention at L = 2048 (57% of the samples in the packed loop, 28% in
 * {@code blocks}, for the same flops). One {@code blocks} call per MR-row block also sweeps all the tile's key panels,
 * paying its set-up once instead of per panel. Unmasked {@code ScaledDotProductAttentionBenchmark},
 * one thread, 8 heads, L = 2048, 256-bit path: 177.4 → 129.5 ms at head width 64 and 150.8 → 77.4
 * ms at 32 (JMH medians of the quietest pair of runs, the two jars one after the other; two later
 * pairs on a busier machine gave 1.05 to 1.45x; see jmh/README.md, "Attention core"). The
 * AVX-512 path has 32 vector registers and was not measured with this change.
 *
 * <p>On the twelve-row block, the query rows are gathered {@link MicroKernel#TILE_STRIDE} floats
 * apart, the score tile's row stride, and both products of a full block take
 * {@link MicroKernel#strideBlocks}, whose constant row stride spares C2's loop twelve row
 * offsets ({@link VectorStrideBlocks}; about 5% off the unmasked core on an Intel Xeon).
 */
final class AttentionTile {
    private AttentionTile() {
    }

    /**
     * Runs the online softmax of the tile's rows over keys {@code [from, to)} (from a multiple of
     * NR), leaving the unnormalized output, row maxima and partial row sums in {@code ws}.
     */
    static void online(HeadLayout q, ScoreMask mask, AttentionKernel.Scores scores, KeyValueSource kv, TileState ws,
                       TileRows tile, int from, int to) {
        int b = tile.b();
        int rows = tile.rows();
        int keys = kv.length();
        int dvPad = kv.dvPad;
        float[] o = ws.acc;
        boolean capped = scores.softcap() > 0f;
        float capLog2 = scores.softcap() * ExpFloat.LOG2E;
        for (int r = 0; r < rows; r++) {
            ws.rowOffsets[r] = q.at(b, tile.token(r), tile.head(r));
        }
        Packing.gatherScaledRows(q.data(), ws.rowOffsets, rows, kv.d,
                capped ? scores.scale() / scores.softcap() : scores.scale() * ExpFloat.LOG2E, ws.query, kv.queryStride(rows));
        Arrays.fill(o, 0, rows * dvPad, 0f);
        Arrays.fill(ws.rowMax, Float.NEGATIVE_INFINITY);
        Arrays.fill(ws.rowSum, 0f);

        // Each row's key range does not change over the tiles: found once, cut per tile below.
        int[] rowStart = ws.rowStart;
        int[] rowEnd = ws.rowEnd;
        int firstKey = Integer.MAX_VALUE;
        int endKey = 0;
        for (int r = 0; r < rows; r++) {
            rowStart[r] = mask.keyStart(tile.maskRow(), tile.token(r));
            rowEnd[r] = mask.keyEnd(tile.maskRow(), tile.token(r), keys);
            firstKey = Math.min(firstKey, rowStart[r]);
            endKey = Math.max(endKey, rowEnd[r]);
        }
        int first = Math.max(from, firstKey / NR * NR);
        int end = Math.min(to, endKey);
        boolean transforms = mask.hasTransforms();
        int[] blockKeys = ws.blockKeys;
        // With few rows (a decode step's query rows per key/value head), the scores of up to AHEAD
        // key tiles are computed before the softmax and value product of any of them: key panels
        // are then read as one stream and value panels as another, instead of switching between
        // the two every tile, which cost the prefetchers up to a third of the time when the
        // panels came from memory (jmh/README.md, "Keys ahead of values"). Each tile's arithmetic
        // is unchanged.
        int ahead = rows <= TileState.AHEAD_ROWS ? TileState.AHEAD : 1;
        int rowBlocks = (rows + MR - 1) / MR;
        for (int next = first; next < end; ) {
            int count = 0;
            // Tiles end at multiples of BK (a source's value chunks), so a first tile that starts
            // between two, under a sliding window, is shorter.
            for (int j0 = next, nk; j0 < end && count < ahead; j0 += nk, next = j0) {
                nk = Math.min(BK - j0 % BK, end - j0);
                if (tile.allMasked(mask, j0, j0 + nk)) {
                    continue;
                }
                // Keys each MR-row block may attend: on a causal diagonal tile the early blocks stop sooner.
                boolean any = false;
                for (int ir = 0; ir < rows; ir += MR) {
                    int last = 0;
                    for (int r = ir; r < Math.min(rows, ir + MR); r++) {
                        last = Math.max(last, rowEnd[r] - j0);
                    }
                    blockKeys[ir / MR] = Math.min(nk, last);
                    any |= last > 0;
                }
                if (!any) {
                    continue;
                }
                kv.scores(ws.query, rows, j0, nk, blockKeys, ws.scoreTile(count), ws.keys);
                ws.aheadStart[count] = j0;
                ws.aheadKeys[count] = nk;
                System.arraycopy(blockKeys, 0, ws.aheadBlockKeys, count * blockKeys.length, rowBlocks);
                count++;
            }
            for (int t = 0; t < count; t++) {
                float[] s = ws.scoreTile(t);
                int j0 = ws.aheadStart[t];
                int nk = ws.aheadKeys[t];
                System.arraycopy(ws.aheadBlockKeys, t * blockKeys.length, blockKeys, 0, rowBlocks);
                boolean transformed = transforms && !tile.keepsAllKeys(mask, j0, j0 + nk);
                // Rows [runStart, runEnd) cover the whole tile and wait for one exponential pass.
                int runStart = 0;
                int runEnd = 0;
                for (int r = 0; r < rows; r++) {
                    int off = r * BK;
                    int hi = Math.max(0, Math.min(nk, rowEnd[r] - j0));
                    int lo = Math.min(hi, Math.max(0, rowStart[r] - j0));
                    // Keys outside the row's range get weight 0 (its block may still read them); a row
                    // whose range covers the tile, the common case, skips both calls.
                    if (lo > 0) {
                        Arrays.fill(s, off, off + lo, 0f);
                    }
                    if (hi < nk) {
                        Arrays.fill(s, off + hi, off + nk, 0f);
                    }
                    int n = hi - lo;
                    if (n == 0) {
                        continue;
                    }
                    int at = off + lo;
                    if (capped) {
                        Kernels.ROWS.softcap(s, at, n, capLog2);
                    }
                    if (transformed) {
                        mask.transform(s, at, n, tile.maskRow(), tile.head(r), tile.token(r), j0 + lo, ExpFloat.LOG2E);
                    }
                    if (n == nk) {
                        if (runEnd != r) {
                            exp2Rows(s, nk, runStart, runEnd, ws, dvPad);
                            runStart = r;
                        }
                        runEnd = r + 1;
                    } else if (Kernels.ROWS.exp2ShiftAccumulateRows(s, lo, BK, n, r, r + 1, ws.rowMax, LAZY_MAX,
                            ws.rowSum) == r) {
                        settleRow(s, lo, n, r, ws, dvPad);
                    }
                }
                exp2Rows(s, nk, runStart, runEnd, ws, dvPad);
                multiplyValues(kv, ws.values, s, 0, BK, rows, j0, nk, blockKeys, o);
            }
        }
    }

    /**
     * Weights {@code 2^(s - m)} and partial sums of the full score rows {@code [r0, r1)}: the
     * maxima of rows that have none yet (their first tile), then one call for the rows whose
     * maximum holds, and {@link #settleRow} for each row that stops it. When every row's maximum
     * was just taken from this tile (the first tile, and at L <= BK the only one), the call skips
     * the lazy bound's check: no score exceeds it.
     */
    private static void exp2Rows(float[] s, int nk, int r0, int r1, TileState ws, int dvPad) {
        boolean fresh = true;
        for (int r = r0; r < r1; r++) {
            if (ws.rowMax[r] == Float.NEGATIVE_INFINITY) {
                raiseMax(s, r * BK, nk, r, ws, dvPad);
            } else {
                fresh = false;
            }
        }
        float bound = fresh ? Float.POSITIVE_INFINITY : LAZY_MAX;
        for (int r = r0; r < r1; r++) {
            r = Kernels.ROWS.exp2ShiftAccumulateRows(s, 0, BK, nk, r, r1, ws.rowMax, bound, ws.rowSum);
            if (r < r1) {
                settleRow(s, 0, nk, r, ws, dvPad);
            }
        }
    }

    /**
     * Weights and partial sums of the {@code n} scores of row r from {@code s[off + r * BK]}, a
     * row that {@code exp2ShiftAccumulateRows} refused, after {@link #raiseMax}; a row with no
     * maximum (all its scores {@code -Infinity}) gets weights 0.
     */
    private static void settleRow(float[] s, int off, int n, int r, TileState ws, int dvPad) {
        int at = off + r * BK;
        if (raiseMax(s, at, n, r, ws, dvPad) == Float.NEGATIVE_INFINITY) {
            Arrays.fill(s, at, at + n, 0f);
            return;
        }
        // Within the bound now: every score is at most the maximum plus LAZY_MAX, or NaN.
        Kernels.ROWS.exp2ShiftAccumulateRows(s, off, BK, n, r, r + 1, ws.rowMax, LAZY_MAX, ws.rowSum);
    }

    /**
     * Raises row r's maximum {@code m} where needed for its {@code n} scores at {@code s[at]}, and
     * returns it: when the row has none yet or a score exceeds it by more than
     * {@link AttentionKernel#LAZY_MAX}, {@code m} becomes the scores' maximum if larger, and the
     * row's accumulator and partial sums are scaled by {@code 2^(old m - m)}. The maximum leaves
     * NaN scores out (their weights are NaN and spread to the row), unless the tile holds nothing
     * else: then it is NaN, and so are the row's weights.
     */
    private static float raiseMax(float[] s, int at, int n, int r, TileState ws, int dvPad) {
        float oldMax = ws.rowMax[r];
        float newMax = oldMax;
        if (oldMax == Float.NEGATIVE_INFINITY || Kernels.ROWS.anyAbove(s, at, n, oldMax + LAZY_MAX)) {
            float tileMax = Kernels.ROWS.maxIgnoringNaN(s, at, n);
            // Scores all NaN or -Infinity: Math.max's rules make the maximum NaN, and the row's weights with it.
            newMax = Math.max(oldMax, tileMax == Float.NEGATIVE_INFINITY ? Kernels.ROWS.max(s, at, n) : tileMax);
        }
        if (newMax != oldMax && oldMax != Float.NEGATIVE_INFINITY) {
            float correction = ExpFloat.exp2(oldMax - newMax);
            Kernels.ROWS.scale(ws.acc, r * dvPad, dvPad, correction);
            Kernels.ROWS.scale(ws.rowSum, r * SUM_LANES, SUM_LANES, correction);
        }
        ws.rowMax[r] = newMax;
        return newMax;
    }

    /**
     * Writes each output row, divided by its softmax sum plus the head's sink term
     * {@code 2^(sink - m)} ({@code sinks} in base 2, or null), to its place in {@code out}: one
     * pass over the accumulator. Rows with nothing to attend are 0.
     */
    static void finish(HeadLayout out, TileState ws, TileRows tile, int dvPad, float[] sinks) {
        for (int r = 0; r < tile.rows(); r++) {
            float l = ws.total(r);
            if (sinks != null && ws.rowMax[r] != Float.NEGATIVE_INFINITY) {
                l += ExpFloat.exp2(sinks[tile.head(r)] - ws.rowMax[r]);
            }
            Kernels.ROWS.scaleInto(ws.acc, r * dvPad, out.width(), l > 0f ? 1f / l : 0f, out.data(),
                    out.at(tile.b(), tile.token(r), tile.head(r)));
        }
    }

    /** Scores, softmax weights (into {@code weights}, row-major {@code (B, H, Lq, Lk)}) and output of one head's tile. */
    static void materialized(HeadLayout q, HeadLayout out, ScoreMask mask, AttentionKernel.Scores scores,
                             KeyValueSource kv, TileState ws, float[] weights, TileRows tile) {
        int b = tile.b();
        int h = tile.hBase();
        int rows = tile.rows();
        int keys = kv.length();
        int base = ((b * q.heads() + h) * q.length() + tile.i0()) * keys;
        int aOff = q.at(b, tile.i0(), h);
        for (int j0 = 0; j0 < keys; j0 += BK) {
            int nk = Math.min(BK, keys - j0);
            kv.keys(j0, nk, ws.keys);
            int panels = (nk + NR - 1) / NR;
            for (int ir = 0; ir < rows; ir += MR) {
                Kernels.MICRO.blocks(kv.d, q.data(), aOff + ir * q.rowStride(), q.rowStride(), ws.keys.data, ws.keys.offset,
                        NR * kv.d, panels, weights, base + ir * keys + j0, keys, Math.min(MR, rows - ir),
                        nk - (panels - 1) * NR, false);
            }
        }
        boolean capped = scores.softcap() > 0f;
        for (int r = 0; r < rows; r++) {
            int off = base + r * keys;
            int t = tile.token(r);
            int hi = mask.keyEnd(tile.maskRow(), t, keys);
            int lo = Math.min(hi, mask.keyStart(tile.maskRow(), t));
            Arrays.fill(weights, off, off + lo, 0f);
            Arrays.fill(weights, off + hi, off + keys, 0f);
            int n = hi - lo;
            if (n == 0) {
                continue;
            }
            Kernels.ROWS.scale(weights, off + lo, n, capped ? scores.scale() / scores.softcap() : scores.scale());
            if (capped) {
                Kernels.ROWS.softcap(weights, off + lo, n, scores.softcap());
            }
            mask.transform(weights, off + lo, n, tile.maskRow(), h, t, lo, 1f);
            Softmax.normalize(weights, off + lo, n, scores.sinks() == null ? Float.NEGATIVE_INFINITY : scores.sinks()[h]);
        }
        Arrays.fill(ws.acc, 0, rows * kv.dvPad, 0f);
        for (int j0 = 0; j0 < keys; j0 += BK) {
            int nk = Math.min(BK, keys - j0);
            multiplyValues(kv, ws.values, weights, base + j0, keys, rows, j0, nk, null, ws.acc);
        }
        store(out, ws.acc, kv.dvPad, tile);
    }

    /**
     * {@code o[rows x dvPad] += p[rows x nk] · values[j0..j0+nk)}. A key whose weight is exactly
     * 0 contributes nothing, even when its value row holds NaN or an infinity (where {@code 0 · NaN}
     * would be NaN): such tiles, flagged when stored, take {@link #multiplyValuesSkippingZeros}.
     * When {@code blockKeys} is not null, MR-row block {@code ir} stops after
     * {@code blockKeys[ir / MR]} keys, whose weights beyond are all 0.
     */
    private static void multiplyValues(KeyValueSource kv, KeyValueSource.Tile v, float[] p, int pOff, int ldp,
                                       int rows, int j0, int nk, int[] blockKeys, float[] o) {
        if (kv.hasNonFiniteValues(j0, j0 + nk)) {
            kv.values(j0, nk, v);
            multiplyValuesSkippingZeros(kv.dvPad, v, p, pOff, ldp, rows, nk, o);
        } else {
            kv.multiplyValues(p, pOff, ldp, rows, j0, nk, blockKeys, o, v);
        }
    }

    /**
     * The same product one element at a time, leaving out zero weights. Each element is still one
     * chain of fused multiply-adds in increasing key order added to {@code o}, like the
     * micro-kernel, so finite values give the same bits as the fast path.
     */
    private static void multiplyValuesSkippingZeros(int dvPad, KeyValueSource.Tile v, float[] p, int pOff, int ldp,
                                                    int rows, int nk, float[] o) {
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < dvPad; c++) {
                int panel = v.offset + c / NR * v.stride + c % NR;
                float acc = 0f;
                for (int j = 0; j < nk; j++) {
                    float w = p[pOff + r * ldp + j];
                    if (w != 0f) {
                        acc = Math.fma(w, v.data[panel + j * NR], acc);
                    }
                }
                o[r * dvPad + c] += acc;
            }
        }
    }

    /** Copies the tile's output rows from the accumulator into {@code out}. */
    static void store(HeadLayout out, float[] o, int dvPad, TileRows tile) {
        for (int r = 0; r < tile.rows(); r++) {
            System.arraycopy(o, r * dvPad, out.data(), out.at(tile.b(), tile.token(r), tile.head(r)), out.width());
        }
    }
}
