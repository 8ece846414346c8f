package io.github.attn4j.kernel;

import static io.github.attn4j.kernel.Kernels.MR;
import static io.github.attn4j.kernel.Kernels.NR;

/**
 * Scaled dot-product attention over head layouts, tiled so that every product goes through the
 * {@linkplain MicroKernel micro-kernel}.
 *
 * <p>Work is split per (batch, key/value head): its keys are packed once into NR-wide panels
 * and its values into rows padded to a multiple of NR, and every query head of the group (GQA)
 * and every query tile reuse them. Per query tile of {@link #BQ} rows:
 * <ul>
 *   <li><b>online softmax</b> (no weights requested): the key range is walked in tiles of
 *       {@link #BK}; the score tile {@code Q Kᵀ} is scaled, masked and exponentiated against a
 *       running row maximum, the output accumulator is rescaled when the maximum grows, and
 *       {@code P V} is added. Memory is per tile, never {@code Lq x Lk}. Key tiles above the
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

    private AttentionKernel() {
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
     * on up to {@code threads} threads. Every (query head, query tile) is one task computed start
     * to finish by one thread, so the result is bit-identical for every thread count.
     *
     * @throws IllegalArgumentException also if {@code threads < 1}
     */
    public static void forward(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout out,
                               ScoreMask mask, float scale, float[] weights, int threads) {
        checkShapes(q, k, v, out, weights);
        require(threads >= 1, "threads", "at least 1", threads);
        int groups = k.heads();
        int perGroup = groups == 0 ? 0 : q.heads() / groups;
        int queryTiles = (q.length() + BQ - 1) / BQ;
        int tasks = perGroup * queryTiles;
        PackedKeysValues kv = new PackedKeysValues(k.length(), k.width(), v.width());
        TileState[] states = new TileState[Parallel.workers(threads, tasks)];
        for (int b = 0; b < q.batch(); b++) {
            for (int g = 0; g < groups; g++) {
                kv.pack(k, v, b, g);
                int batch = b, firstHead = g * perGroup;
                Parallel.forEach(threads, tasks, (task, worker) -> {
                    TileState ts = states[worker] == null ? (states[worker] = new TileState(kv, weights == null)) : states[worker];
                    int h = firstHead + task / queryTiles;
                    int i0 = task % queryTiles * BQ;
                    int rows = Math.min(BQ, q.length() - i0);
                    if (weights == null) {
                        onlineTile(q, out, mask, scale, kv, ts, batch, h, i0, rows);
                    } else {
                        materializedTile(q, out, mask, scale, kv, ts, weights, batch, h, i0, rows);
                    }
                });
            }
        }
    }

    private static void onlineTile(HeadLayout q, HeadLayout out, ScoreMask mask, float scale,
                                   PackedKeysValues kv, TileState ws, int b, int h, int i0, int rows) {
        int keys = kv.keys;
        int dvPad = kv.dvPad;
        float[] s = ws.scores;
        float[] o = ws.acc;
        java.util.Arrays.fill(o, 0, rows * dvPad, 0f);
        java.util.Arrays.fill(ws.rowMax, Float.NEGATIVE_INFINITY);
        java.util.Arrays.fill(ws.rowSum, 0f);

        int keyEnd = mask.keyLimit(i0 + rows - 1, keys);
        for (int j0 = 0; j0 < keyEnd; j0 += BK) {
            int nk = Math.min(BK, keyEnd - j0);
            if (mask.masksAllKeys(b, h, j0, j0 + nk)) {
                continue;
            }
            scoreTile(q, kv, b, h, i0, rows, j0, nk, s, 0, BK);
            for (int r = 0; r < rows; r++) {
                int off = r * BK;
                int n = Math.max(0, Math.min(nk, mask.keyLimit(i0 + r, keys) - j0));
                float tileMax = n == 0 ? Float.NEGATIVE_INFINITY : mask.scaleMaskMax(s, off, n, b, h, i0 + r, scale, j0);
                float oldMax = ws.rowMax[r];
                float newMax = Math.max(oldMax, tileMax);
                if (newMax == Float.NEGATIVE_INFINITY) {
                    Softmax.fill(s, off, nk, 0f);
                    continue;
                }
                float sum = Kernels.ROWS.expShiftSum(s, off, n, newMax);
                Softmax.fill(s, off + n, nk - n, 0f);
                float correction = oldMax == newMax ? 1f : (float) StrictMath.exp(oldMax - newMax);
                if (correction != 1f) {
                    Kernels.ROWS.scale(o, r * dvPad, dvPad, correction);
                }
                ws.rowSum[r] = ws.rowSum[r] * correction + sum;
                ws.rowMax[r] = newMax;
            }
            multiplyValues(kv, s, 0, BK, rows, j0, nk, o);
        }
        for (int r = 0; r < rows; r++) {
            float l = ws.rowSum[r];
            Kernels.ROWS.scale(o, r * dvPad, dvPad, l > 0f ? 1f / l : 0f);
        }
        store(out, o, dvPad, b, h, i0, rows);
    }

    private static void materializedTile(HeadLayout q, HeadLayout out, ScoreMask mask, float scale,
                                         PackedKeysValues kv, TileState ws, float[] weights, int b, int h, int i0, int rows) {
        int keys = kv.keys;
        int base = ((b * q.heads() + h) * q.length() + i0) * keys;
        scoreTile(q, kv, b, h, i0, rows, 0, keys, weights, base, keys);
        Softmax.scaleMaskRows(weights, base, rows, keys, keys, mask, b, h, i0, scale);
        java.util.Arrays.fill(ws.acc, 0, rows * kv.dvPad, 0f);
        multiplyValues(kv, weights, base, keys, rows, 0, keys, ws.acc);
        store(out, ws.acc, kv.dvPad, b, h, i0, rows);
    }

    /** Scores of query rows {@code i0..i0+rows)} against keys {@code j0..j0+nk)} into {@code c[cOff...]} (row stride ldc). */
    private static void scoreTile(HeadLayout q, PackedKeysValues kv, int b, int h, int i0, int rows,
                                  int j0, int nk, float[] c, int cOff, int ldc) {
        int d = kv.d;
        for (int jr = 0; jr < nk; jr += NR) {
            int panel = (j0 + jr) / NR * NR * d;
            int nr = Math.min(NR, nk - jr);
            for (int ir = 0; ir < rows; ir += MR) {
                Kernels.MICRO.block(d, q.data(), q.at(b, i0 + ir, h), q.rowStride(), kv.keyPanels, panel,
                        c, cOff + ir * ldc + jr, ldc, Math.min(MR, rows - ir), nr, false);
            }
        }
    }

    /**
     * {@code o[rows x dvPad] += p[rows x nk] · values[j0..j0+nk)}. A key whose weight is exactly
     * 0 contributes nothing, even when its value row holds NaN or an infinity (where {@code 0 · NaN}
     * would be NaN): such tiles, flagged when packing, take {@link #multiplyValuesSkippingZeros}.
     */
    private static void multiplyValues(PackedKeysValues kv, float[] p, int pOff, int ldp, int rows, int j0, int nk, float[] o) {
        if (kv.hasNonFiniteValues(j0, j0 + nk)) {
            multiplyValuesSkippingZeros(kv, p, pOff, ldp, rows, j0, nk, o);
            return;
        }
        int dvPad = kv.dvPad;
        for (int jr = 0; jr < dvPad; jr += NR) {
            for (int ir = 0; ir < rows; ir += MR) {
                Kernels.MICRO.block(nk, p, pOff + ir * ldp, ldp, kv.valuePanels, jr * kv.keys + j0 * NR,
                        o, ir * dvPad + jr, dvPad, Math.min(MR, rows - ir), NR, true);
            }
        }
    }

    /**
     * The same product one element at a time, leaving out zero weights. Each element is still one
     * chain of fused multiply-adds in increasing key order added to {@code o}, like the
     * micro-kernel, so finite values give the same bits as the fast path.
     */
    private static void multiplyValuesSkippingZeros(PackedKeysValues kv, float[] p, int pOff, int ldp, int rows,
                                                    int j0, int nk, float[] o) {
        int dvPad = kv.dvPad;
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < dvPad; c++) {
                int panel = c / NR * NR * kv.keys + c % NR;
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

    private static void store(HeadLayout out, float[] o, int dvPad, int b, int h, int i0, int rows) {
        for (int r = 0; r < rows; r++) {
            System.arraycopy(o, r * dvPad, out.data(), out.at(b, i0 + r, h), out.width());
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

    /** Keys and values of one (batch, kv head), packed once and read by every tile of its query heads. */
    private static final class PackedKeysValues {
        final int keys;
        final int d;
        final int dvPad;
        final float[] keyPanels;
        final float[] valuePanels;
        /** Per tile of {@link #BK} keys: whether one of its value rows is not finite. */
        final boolean[] nonFiniteTiles;

        PackedKeysValues(int keys, int d, int dv) {
            this.keys = keys;
            this.d = d;
            this.dvPad = Math.max(NR, Kernels.roundUp(dv, NR));
            this.keyPanels = new float[Kernels.roundUp(keys, NR) * d];
            this.valuePanels = new float[keys * dvPad];
            this.nonFiniteTiles = new boolean[(keys + BK - 1) / BK];
        }

        /** Whether a value row of a key in {@code [j0, j1)} holds NaN or an infinity. */
        boolean hasNonFiniteValues(int j0, int j1) {
            for (int t = j0 / BK; t * BK < j1; t++) {
                if (nonFiniteTiles[t]) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Packs keys of (b, g) into panels of NR keys (d rows of NR floats: Kᵀ as a B operand) and
         * values into panels of NR columns (Lk rows of NR floats: V as a B operand).
         */
        void pack(HeadLayout k, HeadLayout v, int b, int g) {
            float[] kd = k.data();
            for (int j = 0; j < keys; j++) {
                int src = k.at(b, j, g);
                int dst = j / NR * NR * d + j % NR;
                for (int c = 0; c < d; c++) {
                    keyPanels[dst + c * NR] = kd[src + c];
                }
            }
            int dv = v.width();
            java.util.Arrays.fill(nonFiniteTiles, false);
            for (int j = 0; j < keys; j++) {
                if (Kernels.ROWS.anyNonFinite(v.data(), v.at(b, j, g), dv)) {
                    nonFiniteTiles[j / BK] = true;
                }
            }
            for (int c0 = 0; c0 < dv; c0 += NR) {
                int width = Math.min(NR, dv - c0);
                int panel = c0 * keys;
                for (int j = 0; j < keys; j++) {
                    System.arraycopy(v.data(), v.at(b, j, g) + c0, valuePanels, panel + j * NR, width);
                }
            }
        }
    }

    /** One worker's state for a query tile: score tile, output accumulator, running max and sum per row. */
    private static final class TileState {
        final float[] scores;
        final float[] acc;
        final float[] rowMax = new float[BQ];
        final float[] rowSum = new float[BQ];

        TileState(PackedKeysValues kv, boolean online) {
            this.scores = new float[online ? BQ * BK : 0];
            this.acc = new float[BQ * kv.dvPad];
        }
    }
}
