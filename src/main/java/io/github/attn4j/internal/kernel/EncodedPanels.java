package io.github.attn4j.internal.kernel;

import java.util.Arrays;

import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * Keys and values stored narrower than float32 ({@link HalfPanels}, {@link Int8Panels}), at the
 * indices of the float32 panels ({@link KeyValueSource#keyIndex}, {@link KeyValueSource#valueIndex}),
 * each in a narrower array. Appending
 * encodes (rounds) each value once; a tile request decodes the tile into the {@link Tile}'s
 * scratch in exactly the float32 panel layout, so the tile kernel reads it as it reads float32
 * panels, and gets the same bits as from float32 panels holding the decoded values. Products for
 * at most {@link DecodeOps#PRODUCT_ROWS} query rows (a decode step) skip the decoded tile: the
 * {@link DecodeOps} products widen the stored panels as they read them ({@link #keyProduct},
 * {@link #valueProduct}), with the same bits. INT8 scores are the exception: their product
 * applies each block's scale to its partial sum, so {@link Int8Panels} computes the scores of
 * every tile through it ({@link #stepScoreRows}).
 *
 * <p>This class keeps the length, the growth and the per-tile flags of value rows holding NaN
 * or an infinity (every format here decodes a non-finite input to a non-finite value, so the
 * flags are taken from the float input); subclasses hold the arrays and encode and decode.
 * Not thread-safe: one writer at a time, and no reads during a write.
 */
abstract class EncodedPanels extends KeyValueSource {
    int capacity;
    int keys;
    boolean[] nonFiniteTiles = new boolean[0];
    /**
     * The same per tile for key rows, taken from the float input on append. Truncation clears
     * only whole tiles past the cut, so a flag may stay set after its key is gone: a set flag
     * only costs the exact widening.
     */
    boolean[] nonFiniteKeyTiles = new boolean[0];

    EncodedPanels(int d, int dv, int elementBytes, int capacity) {
        super(d, dv, elementBytes, capacity);
    }

    /** Allocates arrays for {@code newCapacity} keys and copies the {@link #keys} held into them ({@link #copyHeld}). */
    abstract void reallocate(int newCapacity);

    /** Encodes the key {@code x[src .. src + d)} as key {@code j}. */
    abstract void encodeKey(float[] x, int src, int j);

    /** Encodes the value {@code x[src .. src + dv)} as value {@code j}. */
    abstract void encodeValue(float[] x, int src, int j);

    /** Decodes key panels {@code [p0, p0 + panels)} into {@code dst} from 0, in the float32 key panel layout. */
    abstract void decodeKeys(int p0, int panels, float[] dst);

    /** Decodes column panel {@code c0 / NR} of values {@code [j0, j0 + nk)} into {@code dst} at {@code dOff}, NR floats per key. */
    abstract void decodeValues(int c0, int j0, int nk, float[] dst, int dOff);

    /**
     * Scores of at most {@link DecodeOps#PRODUCT_ROWS} query rows (row-major in {@code q}, row
     * {@code i} at {@code q[qOff + i * ldq]}, read in place) against key panels
     * {@code [p0, p0 + panels)}, the last {@code lastNr} keys wide, into {@code s} from
     * {@code sOff} (row stride {@code lds}): a {@link DecodeOps} product. {@code finite}: no key of these panels holds an
     * infinity or NaN.
     */
    abstract void keyProduct(float[] q, int qOff, int ldq, int rows, int p0, int panels, int lastNr, float[] s, int sOff, int lds,
                             boolean finite);

    /**
     * {@code o[oOff .., rows x dvPad] += a · values[j0, j0 + kc)} for at most
     * {@link DecodeOps#PRODUCT_ROWS} weight rows (row-major in {@code a}, row {@code i} at
     * {@code a[aOff + i * lda]}, read in place): a {@link DecodeOps} product.
     */
    abstract void valueProduct(float[] a, int aOff, int lda, int rows, int j0, int kc, float[] o, int oOff);

    /** Bytes of the subclass's arrays. */
    abstract long arrayBytes();

    /** Sets the initial capacity; subclass constructors call it once their own fields are set. */
    final void allocate(int initialCapacity) {
        capacity = Math.max(initialCapacity, 0);
        reallocate(capacity);
        nonFiniteTiles = new boolean[flagCount(capacity)];
        nonFiniteKeyTiles = new boolean[flagCount(capacity)];
    }

    @Override
    public final int length() {
        return keys;
    }

    @Override
    public final int capacity() {
        return capacity;
    }

    @Override
    public final long storageBytes() {
        return arrayBytes() + 2L * nonFiniteTiles.length;
    }

    @Override
    final void keys(int j0, int nk, Tile tile) {
        int panels = (nk + NR - 1) / NR;
        float[] dst = tile.scratch(panels * NR * d);
        decodeKeys(j0 / NR, panels, dst);
        tile.set(dst, 0, NR * d);
    }

    @Override
    final void values(int j0, int nk, Tile tile) {
        float[] dst = tile.scratch(dvPad / NR * VALUE_PANEL);
        for (int c0 = 0; c0 < dvPad; c0 += NR) {
            decodeValues(c0, j0, nk, dst, c0 / NR * VALUE_PANEL);
        }
        tile.set(dst, 0, VALUE_PANEL);
    }

    @Override
    final void stepScores(float[] qs, int qOff, int rows, int j0, int nk, int n, float[] s, int sOff, Tile tile) {
        int panels = (n + NR - 1) / NR;
        keyProduct(qs, qOff, d, rows, j0 / NR, panels, n - (panels - 1) * NR, s, sOff, AttentionKernel.BK,
                !anyFlagged(nonFiniteKeyTiles, j0, j0 + nk));
    }

    @Override
    final void stepValues(float[] p, int pOff, int ldp, int rows, int j0, int kc, float[] o, int oOff, Tile tile) {
        valueProduct(p, pOff, ldp, rows, j0, kc, o, oOff);
    }

    @Override
    public final void append(HeadLayout k, HeadLayout v, int b, int g, int count) {
        checkAppend(k, v, b, g, count);
        int needed = keys + count;
        if (needed > capacity) {
            int newCapacity = grownCapacity(needed, capacity);
            reallocate(newCapacity);
            capacity = newCapacity;
            nonFiniteTiles = Arrays.copyOf(nonFiniteTiles, flagCount(newCapacity));
            nonFiniteKeyTiles = Arrays.copyOf(nonFiniteKeyTiles, flagCount(newCapacity));
        }
        for (int t = 0; t < count; t++) {
            int src = k.at(b, t, g);
            if (Kernels.ROWS.anyNonFinite(k.data(), src, d)) {
                nonFiniteKeyTiles[(keys + t) / AttentionKernel.BK] = true;
            }
            encodeKey(k.data(), src, keys + t);
        }
        float[] vd = v.data();
        for (int t = 0; t < count; t++) {
            int j = keys + t;
            int src = v.at(b, t, g);
            if (Kernels.ROWS.anyNonFinite(vd, src, dv)) {
                nonFiniteTiles[j / AttentionKernel.BK] = true;
            }
            encodeValue(vd, src, j);
        }
        keys = needed;
    }

    @Override
    public final void truncate(int newLength) {
        keys = newLength;
        cutValueFlags(nonFiniteTiles, newLength);
        Arrays.fill(nonFiniteKeyTiles, flagCount(newLength), nonFiniteKeyTiles.length, false);
    }

    @Override
    final boolean hasNonFiniteValues(int j0, int j1) {
        return anyFlagged(nonFiniteTiles, j0, j1);
    }

    /**
     * Copies the first {@code length} elements, those of the {@link #keys} held (elements never
     * move with the capacity), from one array to another of the same element type.
     */
    final void copyHeld(Object from, Object to, int length) {
        if (keys > 0) {
            System.arraycopy(from, 0, to, 0, length);
        }
    }
}
