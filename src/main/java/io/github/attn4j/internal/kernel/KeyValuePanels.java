package io.github.attn4j.internal.kernel;

import java.util.Arrays;

import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * The keys and values of one (batch, key/value head) as float32, in the micro-kernel's B-operand
 * layout ({@link KeyValueSource}), so that score tiles ({@code Q Kᵀ}) and value products
 * ({@code P V}) stream them with no further copy. {@link AttentionKernel} packs a fresh one per
 * call from head layouts; a KV cache keeps one per (batch, head) and appends each step's tokens
 * to it, so decoding never repacks the cache. Per tile of {@link AttentionKernel#BK} keys, a flag
 * says whether a value row holds NaN or an infinity, so that only such tiles take the slower
 * product that leaves out zero weights.
 * Not thread-safe: one writer at a time, and no reads during a write.
 */
public final class KeyValuePanels extends KeyValueSource {
    int capacity;
    int keys;
    float[] keyPanels;
    float[] valuePanels;
    boolean[] nonFiniteTiles;

    /**
     * Empty panels for keys of width {@code d} and values of width {@code dv}, with room for
     * {@code capacity} keys before they grow.
     */
    public KeyValuePanels(int d, int dv, int capacity) {
        super(d, dv, Float.BYTES, capacity);
        allocate(Math.max(capacity, 0));
    }

    @Override
    public int length() {
        return keys;
    }

    @Override
    void keys(int j0, int nk, Tile tile) {
        tile.set(keyPanels, keyIndex(j0, 0), NR * d);
    }

    @Override
    void values(int j0, int nk, Tile tile) {
        tile.set(valuePanels, valueIndex(j0, 0), VALUE_PANEL);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** Replaces the contents by the keys and values of batch {@code b}, head {@code g} of the layouts. */
    public void packFrom(HeadLayout k, HeadLayout v, int b, int g) {
        keys = 0;
        Arrays.fill(nonFiniteTiles, false);
        append(k, v, b, g, k.length());
    }

    /**
     * Appends the first {@code count} tokens of batch {@code b}, head {@code g} of the layouts,
     * growing (doubling) when needed.
     */
    @Override
    public void append(HeadLayout k, HeadLayout v, int b, int g, int count) {
        int needed = keys + count;
        if (needed > capacity) {
            grow(grownCapacity(needed, capacity));
        }
        // One transpose per panel the new keys reach (the first may be partly filled already).
        for (int t = 0; t < count; ) {
            int j = keys + t;
            int n = Math.min(count - t, NR - j % NR);
            Kernels.ROWS.transposeToPanel(k.data(), k.at(b, t, g), k.rowStride(), n, d, keyPanels, keyIndex(j, 0));
            t += n;
        }
        // One copy per column panel and run of tokens within a tile, its NaN and infinity test
        // once per run: per token and panel, the calls took a third of the packing at L = 128.
        for (int t = 0; t < count; ) {
            int j = keys + t;
            int n = Math.min(count - t, AttentionKernel.BK - j % AttentionKernel.BK);
            int src = v.at(b, t, g);
            boolean finite = true;
            for (int c0 = 0; c0 < dv; c0 += NR) {
                finite &= Kernels.ROWS.copyFinite(v.data(), src + c0, v.rowStride(), valuePanels, valueIndex(j, c0), NR, n,
                        Math.min(NR, dv - c0));
            }
            if (!finite) {
                nonFiniteTiles[j / AttentionKernel.BK] = true;
            }
            t += n;
        }
        keys = needed;
    }

    @Override
    public void truncate(int newLength) {
        keys = newLength;
        cutValueFlags(nonFiniteTiles, newLength);
    }

    @Override
    boolean valueRowNonFinite(int j) {
        for (int c0 = 0; c0 < dv; c0 += NR) {
            if (Kernels.ROWS.anyNonFinite(valuePanels, valueIndex(j, c0), Math.min(NR, dv - c0))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public long storageBytes() {
        return 4L * (keyPanels.length + valuePanels.length) + nonFiniteTiles.length;
    }

    @Override
    boolean hasNonFiniteValues(int j0, int j1) {
        return anyFlagged(nonFiniteTiles, j0, j1);
    }

    private void allocate(int newCapacity) {
        capacity = newCapacity;
        keyPanels = new float[keyLength(newCapacity)];
        valuePanels = new float[valueLength(newCapacity)];
        nonFiniteTiles = new boolean[flagCount(newCapacity)];
    }

    private void grow(int newCapacity) {
        float[] oldKeys = keyPanels;
        float[] oldValues = valuePanels;
        boolean[] oldFlags = nonFiniteTiles;
        allocate(newCapacity);
        // Elements never move with the capacity: the keys held are a prefix of each array.
        System.arraycopy(oldKeys, 0, keyPanels, 0, keyLength(keys));
        System.arraycopy(oldValues, 0, valuePanels, 0, valueLength(keys));
        System.arraycopy(oldFlags, 0, nonFiniteTiles, 0, oldFlags.length);
    }
}
