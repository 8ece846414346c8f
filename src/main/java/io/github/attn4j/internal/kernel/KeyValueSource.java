package io.github.attn4j.internal.kernel;

import java.util.Arrays;

/**
 * The keys and values of one (batch row, key/value head) as the attention tile kernel reads them:
 * a tile of keys in the micro-kernel's B layout for the scores {@code Q Kᵀ}, a tile of values in
 * the same layout for {@code P V}, and the two products over them ({@link #scores},
 * {@link #multiplyValues}). How they are stored is the source's business: float32 panels
 * ({@link KeyValuePanels}) hand out their own arrays, a narrower storage type decodes the tile
 * into the {@link Tile}'s scratch, or computes a decode step's products straight from its
 * stored panels; the tile kernel never knows which.
 *
 * <p>Every storage type keeps its elements at the same indices ({@link #keyIndex},
 * {@link #valueIndex}), in arrays of its own element type:
 * <ul>
 *   <li>Keys: panel {@code j / NR} of NR keys starts at {@code start + (j / NR) * NR * d}; depth
 *       {@code c} of key {@code j} is at {@code + c * NR + j % NR} (Kᵀ as a B operand).</li>
 *   <li>Values: chunk {@code j / BK} of {@link AttentionKernel#BK} keys starts at
 *       {@code start + (j / BK) * BK * dvPad} and holds its column panels one after another, each
 *       {@link #VALUE_PANEL} long: column {@code c} of value {@code j} is at
 *       {@code + (c / NR) * VALUE_PANEL + (j % BK) * NR + c % NR} (V as a B operand), zero past
 *       {@code dv}.</li>
 * </ul>
 * ({@link #start} is 0 unless arrays are placed on cache lines: {@link CacheLines}.)
 * So a decode step's key and value tiles are each one contiguous run of memory, and growing
 * the capacity never moves an element. Values were once laid out as whole column panels
 * ({@code (c / NR) * NR * capacity + j * NR}): a value tile was then {@code dvPad / NR} runs of
 * 4 KiB, 1 MiB apart at 16384 tokens, and its product took a third longer than the key
 * product over the same bytes (see jmh/README.md, "KV cache precision").
 *
 * <p>Tiles are requested at key offsets that are multiples of {@link Kernels#NR}, at most
 * {@link AttentionKernel#BK} keys long, and never across a multiple of BK.
 */
public abstract class KeyValueSource {
    /** Width of a key. */
    final int d;
    /** Width of a value. */
    final int dv;
    /** {@code dv} rounded up to a multiple of NR (at least NR): the value columns a product writes. */
    final int dvPad;

    /** Elements from one column panel of a value tile to the next: BK keys of NR columns. */
    static final int VALUE_PANEL = AttentionKernel.BK * Kernels.NR;

    /**
     * Index of the first element of the key and value arrays ({@link CacheLines#pad(int, long)}
     * for the arrays of the first capacity; 0 unless the JVM places them on cache lines): every
     * key panel and value tile then starts a line. It stays when the arrays grow.
     */
    final int start;

    /**
     * Sources of keys of width {@code d} and values of width {@code dv} held in elements of
     * {@code elementBytes} bytes, in arrays allocated first for {@code capacity} keys.
     */
    KeyValueSource(int d, int dv, int elementBytes, int capacity) {
        this.d = d;
        this.dv = dv;
        this.dvPad = paddedWidth(dv);
        int keys = Math.max(capacity, 0);
        long smaller = Math.min((long) Kernels.roundUp(keys, Kernels.NR) * d,
                (long) Kernels.roundUp(keys, AttentionKernel.BK) * dvPad);
        this.start = CacheLines.pad(elementBytes, smaller);
    }

    /** {@code dv} rounded up to a multiple of NR, at least NR: the columns a value product writes. */
    static int paddedWidth(int dv) {
        return Math.max(Kernels.NR, Kernels.roundUp(dv, Kernels.NR));
    }

    /** Index of depth {@code c} of key {@code j}. */
    final int keyIndex(int j, int c) {
        return start + j / Kernels.NR * Kernels.NR * d + c * Kernels.NR + j % Kernels.NR;
    }

    /** Index of column {@code c} of value {@code j}. */
    final int valueIndex(int j, int c) {
        int bk = AttentionKernel.BK;
        return start + j / bk * bk * dvPad + c / Kernels.NR * VALUE_PANEL + j % bk * Kernels.NR + c % Kernels.NR;
    }

    /** Elements of a key array for {@code capacity} keys: whole panels of NR keys after {@link #start}. */
    final int keyLength(int capacity) {
        return start + Kernels.roundUp(capacity, Kernels.NR) * d;
    }

    /** Elements of a value array for {@code capacity} keys: whole chunks of BK keys after {@link #start}. */
    final int valueLength(int capacity) {
        return start + Kernels.roundUp(capacity, AttentionKernel.BK) * dvPad;
    }

    /**
     * The largest capacity whose key and value arrays stay within {@code maxArray} elements
     * each: keys take whole panels of NR keys, values whole chunks of BK, both after a
     * {@link #start} of up to a cache line's elements.
     */
    public static int maxCapacity(int d, int dv, int maxArray) {
        int dvPad = paddedWidth(dv);
        int room = Math.max(0, maxArray - CacheLines.LINE);
        int keysFit = room / Math.max(d, 1) / Kernels.NR * Kernels.NR;
        int valuesFit = room / dvPad / AttentionKernel.BK * AttentionKernel.BK;
        return Math.min(keysFit, valuesFit);
    }

    /**
     * The capacity to grow to when {@code needed} keys exceed {@code capacity}: double it, up to
     * the largest capacity arrays can hold, and at least {@code needed}.
     */
    final int grownCapacity(int needed, int capacity) {
        return Math.max(needed, (int) Math.min(maxCapacity(d, dv, Integer.MAX_VALUE - 8), 2L * capacity));
    }

    /** Flags for {@code capacity} keys: one per tile of {@link AttentionKernel#BK} keys. */
    static int flagCount(int capacity) {
        return (capacity + AttentionKernel.BK - 1) / AttentionKernel.BK;
    }

    /**
     * The value flags after a cut to {@code newLength} keys: tiles past the cut are cleared, and the
     * tile the cut falls in, if it was flagged, is rescanned over the keys it keeps (an unflagged
     * tile keeps only finite rows). The rescan reads the kept values one by one; done for every
     * cut, it took 0.09 of the 0.22 ms of a decode step over 64 BF16 tokens (8 kv heads of 128)
     * cut back after each call, and 0.57 of 0.69 ms over 200 F16 tokens on two threads.
     */
    final void cutValueFlags(boolean[] flags, int newLength) {
        int tile = newLength / AttentionKernel.BK;
        boolean rescan = tile < flags.length && flags[tile];
        Arrays.fill(flags, tile, flags.length, false);
        for (int j = tile * AttentionKernel.BK; rescan && j < newLength && !flags[tile]; j++) {
            flags[tile] = valueRowNonFinite(j);
        }
    }

    /** Whether stored value {@code j} holds (or decodes to) a NaN or an infinity somewhere. */
    abstract boolean valueRowNonFinite(int j);

    /** Whether a flag of a tile holding a key in {@code [j0, j1)} is set. */
    static boolean anyFlagged(boolean[] flags, int j0, int j1) {
        for (int t = j0 / AttentionKernel.BK; t * AttentionKernel.BK < j1; t++) {
            if (flags[t]) {
                return true;
            }
        }
        return false;
    }

    /** Number of keys held. */
    public abstract int length();

    /** Keys the source can hold before it grows. */
    public abstract int capacity();

    /**
     * Appends the first {@code count} tokens of batch {@code b}, head {@code g} of the layouts,
     * growing (doubling) when needed; a narrow source rounds them to its storage type.
     *
     * @throws IllegalArgumentException if the storage type cannot hold a value
     *                                  ({@link #checkAppend}); nothing is appended then
     */
    public abstract void append(HeadLayout k, HeadLayout v, int b, int g, int count);

    /**
     * Throws what {@link #append} with the same arguments would throw, without appending: callers
     * that append to several sources check them all first, so that a failure changes none.
     * Float32 sources take every value.
     *
     * @throws IllegalArgumentException naming {@code k} or {@code v}, the token and the element,
     *                                  if the storage type cannot hold a value
     */
    public void checkAppend(HeadLayout k, HeadLayout v, int b, int g, int count) {
    }

    /** Forgets the keys from {@code newLength} on; the caller checks {@code 0 <= newLength <= length()}. */
    public abstract void truncate(int newLength);

    /** Bytes of the arrays that hold the keys, values and their bookkeeping (scales, flags). */
    public abstract long storageBytes();

    /**
     * The row stride of a query tile of {@code rows} rows for {@link #scores}: d for a decode
     * step's tile ({@link #stepScoreRows}) or a micro-kernel without
     * {@link MicroKernel#strideBlocks} for its MR rows, else {@link MicroKernel#TILE_STRIDE} (when
     * d fits in it), so that full blocks take that loop.
     */
    final int queryStride(int rows) {
        return stridedQueries(d) && !stepScoreRows(rows) ? MicroKernel.TILE_STRIDE : d;
    }

    /** Whether query tiles of width {@code d} may have their rows {@link MicroKernel#TILE_STRIDE} apart. */
    static boolean stridedQueries(int d) {
        return Kernels.MICRO.strideRows() == Kernels.MR && d <= MicroKernel.TILE_STRIDE;
    }

    /**
     * Points {@code tile} at keys {@code [j0, j0 + nk)}: NR-key panels at
     * {@code tile.offset + (j - j0) / NR * NR * d}, depth {@code c} of key {@code j} at
     * {@code + c * NR + j % NR}.
     */
    abstract void keys(int j0, int nk, Tile tile);

    /**
     * Points {@code tile} at the values of keys {@code [j0, j0 + nk)}: column panel
     * {@code c0 / NR} at {@code tile.offset + c0 / NR * tile.stride}, key {@code j}'s NR columns at
     * {@code + (j - j0) * NR}, zero past {@code dv}. The float32 panels hand out their own array
     * ({@code stride} = {@link #VALUE_PANEL}).
     */
    abstract void values(int j0, int nk, Tile tile);

    /**
     * Scores of the query tile {@code qs} (row-major, row stride {@link #queryStride},
     * {@link Packing#gatherScaledRows}) against keys {@code [j0, j0 + nk)}: for each MR-row block
     * {@code ir}, up to {@code blockKeys[ir / MR]} keys, into {@code s} (row stride BK), through
     * {@link MicroKernel#blocks} (one call per block sweeps all its key panels), or
     * {@link MicroKernel#strideBlocks} for a full block whose rows are
     * {@link MicroKernel#TILE_STRIDE} apart, on the tile {@link #keys} points {@code tile} at; a
     * decode step's tile ({@link #stepRows}, rows d apart) through {@link #stepScores} instead, one
     * call per group of at most {@link DecodeOps#PRODUCT_ROWS} rows.
     */
    final void scores(float[] qs, int rows, int j0, int nk, int[] blockKeys, float[] s, Tile tile) {
        if (stepScoreRows(rows)) {
            int n = stepKeys(rows, blockKeys);
            for (int r0 = 0; r0 < rows && n > 0; r0 += DecodeOps.PRODUCT_ROWS) {
                stepScores(qs, r0 * d, Math.min(DecodeOps.PRODUCT_ROWS, rows - r0), j0, nk, n, s, r0 * AttentionKernel.BK, tile);
            }
            return;
        }
        int lda = queryStride(rows);
        keys(j0, nk, tile);
        for (int ir = 0; ir < rows; ir += Kernels.MR) {
            int n = blockKeys[ir / Kernels.MR];
            if (n == 0) {
                continue;
            }
            int panels = (n + Kernels.NR - 1) / Kernels.NR;
            if (lda == MicroKernel.TILE_STRIDE && rows - ir >= Kernels.MR) {
                Kernels.MICRO.strideBlocks(d, qs, ir * lda, tile.data, tile.offset, Kernels.NR * d, panels,
                        s, ir * AttentionKernel.BK, AttentionKernel.BK, n - (panels - 1) * Kernels.NR, false);
            } else {
                Kernels.MICRO.blocks(d, qs, ir * lda, lda, tile.data, tile.offset, Kernels.NR * d, panels,
                        s, ir * AttentionKernel.BK, AttentionKernel.BK, Math.min(Kernels.MR, rows - ir),
                        n - (panels - 1) * Kernels.NR, false);
            }
        }
    }

    /**
     * {@code o[rows x dvPad] += p[rows x nk] · values[j0..j0+nk)}, weights at
     * {@code p[pOff + r * ldp + j]}; when {@code blockKeys} is not null, MR-row block {@code ir}
     * stops after {@code blockKeys[ir / MR]} keys. Through the micro-kernel on the tile
     * {@link #values} points {@code tile} at; a decode step's tile ({@link #stepRows}) through
     * {@link #stepValues} instead, one call per group of at most {@link DecodeOps#PRODUCT_ROWS} rows. The caller leaves out tiles with non-finite values
     * ({@link #hasNonFiniteValues}). Full blocks of weight rows {@link MicroKernel#TILE_STRIDE}
     * apart (the online softmax's score tile) take {@link MicroKernel#strideBlocks}.
     */
    final void multiplyValues(float[] p, int pOff, int ldp, int rows, int j0, int nk, int[] blockKeys, float[] o, Tile tile) {
        if (stepRows(rows)) {
            int kc = blockKeys == null ? nk : stepKeys(rows, blockKeys);
            for (int r0 = 0; r0 < rows && kc > 0; r0 += DecodeOps.PRODUCT_ROWS) {
                stepValues(p, pOff + r0 * ldp, ldp, Math.min(DecodeOps.PRODUCT_ROWS, rows - r0), j0, kc, o, r0 * dvPad, tile);
            }
            return;
        }
        values(j0, nk, tile);
        boolean strided = ldp == MicroKernel.TILE_STRIDE && Kernels.MICRO.strideRows() == Kernels.MR;
        for (int ir = 0; ir < rows; ir += Kernels.MR) {
            int kc = blockKeys == null ? nk : blockKeys[ir / Kernels.MR];
            if (kc > 0 && strided && rows - ir >= Kernels.MR) {
                Kernels.MICRO.strideBlocks(kc, p, pOff + ir * ldp, tile.data, tile.offset, tile.stride, dvPad / Kernels.NR,
                        o, ir * dvPad, dvPad, Kernels.NR, true);
            } else if (kc > 0) {
                Kernels.MICRO.blocks(kc, p, pOff + ir * ldp, ldp, tile.data, tile.offset, tile.stride, dvPad / Kernels.NR,
                        o, ir * dvPad, dvPad, Math.min(Kernels.MR, rows - ir), Kernels.NR, true);
            }
        }
    }

    /**
     * A decode step's scores: at most {@link DecodeOps#PRODUCT_ROWS} query rows ({@code qs}
     * row-major from {@code qOff}, read in place) against the first {@code n} of keys
     * {@code [j0, j0 + nk)}, into {@code s} from {@code sOff} (row stride BK), through {@link DecodeOps#floatProduct} on the tile {@link #keys}
     * points {@code tile} at. A narrow source computes the same product from its stored panels,
     * with no decoded tile. Its 4-row block has no rows past the query's (the micro-kernel has
     * six or twelve): in a plain harness the float32 product ran about 1.5 times as fast as the
     * six-row micro-kernel (see {@link VectorDecodeOps}).
     */
    void stepScores(float[] qs, int qOff, int rows, int j0, int nk, int n, float[] s, int sOff, Tile tile) {
        keys(j0, nk, tile);
        int panels = (n + Kernels.NR - 1) / Kernels.NR;
        Kernels.DECODE.floatProduct(d, qs, qOff, d, tile.data, tile.offset, Kernels.NR * d, panels, s, sOff, AttentionKernel.BK, rows,
                n - (panels - 1) * Kernels.NR, false);
    }

    /**
     * A decode step's {@code o[oOff .., rows x dvPad] += p[rows x kc] · values[j0, j0 + kc)} for at most
     * {@link DecodeOps#PRODUCT_ROWS} weight rows (read in place), through
     * {@link DecodeOps#floatProduct} on the tile {@link #values} points {@code tile} at; a narrow
     * source computes it from its stored panels.
     */
    void stepValues(float[] p, int pOff, int ldp, int rows, int j0, int kc, float[] o, int oOff, Tile tile) {
        values(j0, kc, tile);
        Kernels.DECODE.floatProduct(kc, p, pOff, ldp, tile.data, tile.offset, tile.stride, dvPad / Kernels.NR, o, oOff, dvPad, rows,
                Kernels.NR, true);
    }

    /**
     * Whether the scores of a tile of {@code rows} query rows take {@link #stepScores}: as
     * {@link #stepRows}, unless the source's scores are defined by its step product alone
     * ({@link Int8Panels}, which takes it for every tile).
     */
    boolean stepScoreRows(int rows) {
        return stepRows(rows);
    }

    /**
     * Whether a tile of {@code rows} query rows takes the decode-step products: at most
     * {@link DecodeOps#PRODUCT_ROWS} rows, or two groups of them when the micro-kernel would
     * compute more rows than that (7 or 8 rows against its two 6-row blocks: 8 query heads per
     * key/value head, as in gpt-oss and Llama 3 70B).
     */
    private static boolean stepRows(int rows) {
        return rows <= DecodeOps.PRODUCT_ROWS
                || rows <= 2 * DecodeOps.PRODUCT_ROWS && Kernels.roundUp(rows, Kernels.MR) > 2 * DecodeOps.PRODUCT_ROWS;
    }

    /**
     * The keys a decode step's products read: the most that any MR-row block of the tile may
     * attend. A row's keys past its own range have weight 0 (its scores there are cleared before
     * the exponentials), as for the micro-kernel's blocks.
     */
    private static int stepKeys(int rows, int[] blockKeys) {
        int n = 0;
        for (int ir = 0; ir < rows; ir += Kernels.MR) {
            n = Math.max(n, blockKeys[ir / Kernels.MR]);
        }
        return n;
    }

    /** Whether a value row of a key in {@code [j0, j1)} holds NaN or an infinity. */
    abstract boolean hasNonFiniteValues(int j0, int j1);

    /** Where a requested tile lives: an array, the offset of its first element and, for values, the panel stride. */
    static final class Tile {
        float[] data;
        int offset;
        int stride;
        /** Room for one decoded tile, for sources that do not hold float32 panels; grown on demand. */
        float[] scratch = new float[0];

        /** {@link #scratch}, grown to at least {@code n} floats. */
        float[] scratch(int n) {
            if (scratch.length < n) {
                scratch = new float[n];
            }
            return scratch;
        }

        void set(float[] data, int offset, int stride) {
            this.data = data;
            this.offset = offset;
            this.stride = stride;
        }
    }
}
