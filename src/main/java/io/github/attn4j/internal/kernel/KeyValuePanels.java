package io.github.attn4j.internal.kernel;

import java.util.Arrays;

import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * The keys and values of one (batch, key/value head) in the micro-kernel's B-operand layout, so
 * that score tiles ({@code Q Kᵀ}) and value products ({@code P V}) stream them with no further
 * copy. {@link AttentionKernel} packs a fresh one per call from head layouts; a KV cache keeps one
 * per (batch, head) and appends each step's tokens to it, so decoding never repacks the cache.
 *
 * <ul>
 *   <li>Keys: panel {@code j / NR} of NR keys starts at {@code (j / NR) * NR * d}; depth
 *       {@code c} of key {@code j} is at {@code + c * NR + j % NR} (Kᵀ as a B operand). Appending
 *       never moves earlier keys.</li>
 *   <li>Values: column panel {@code c0 / NR} starts at {@code c0 * capacity}; key {@code j}'s NR
 *       columns are at {@code + j * NR} (V as a B operand), zero past {@code dv}.</li>
 *   <li>Per tile of {@link AttentionKernel#BK} keys, a flag says whether a value row holds NaN or
 *       an infinity, so that only such tiles take the slower product that leaves out zero
 *       weights.</li>
 * </ul>
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
        super(d, dv);
        allocate(Math.max(capacity, 0));
    }

    @Override
    public int length() {
        return keys;
    }

    @Override
    void keys(int j0, int nk, Tile tile) {
        tile.set(keyPanels, j0 / NR * NR * d, NR * d);
    }

    @Override
    void values(int j0, int nk, Tile tile) {
        tile.set(valuePanels, j0 * NR, NR * capacity);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /**
     * The largest capacity whose two arrays stay within {@code maxArray} floats each: one more
     * key and an array would exceed it.
     */
    public static int maxCapacity(int d, int dv, int maxArray) {
        long perKey = Math.max(Math.max(d, 1), Math.max(NR, Kernels.roundUp(dv, NR)));
        return (int) ((maxArray - (long) NR * d) / perKey);
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
            grow(Math.max(needed, (int) Math.min(maxCapacity(d, dv, Integer.MAX_VALUE - 8), 2L * capacity)));
        }
        float[] kd = k.data();
        for (int t = 0; t < count; t++) {
            int j = keys + t;
            int src = k.at(b, t, g);
            int dst = j / NR * NR * d + j % NR;
            for (int c = 0; c < d; c++) {
                keyPanels[dst + c * NR] = kd[src + c];
            }
        }
        float[] vd = v.data();
        for (int t = 0; t < count; t++) {
            int j = keys + t;
            int src = v.at(b, t, g);
            if (Kernels.ROWS.anyNonFinite(vd, src, dv)) {
                nonFiniteTiles[j / AttentionKernel.BK] = true;
            }
            for (int c0 = 0; c0 < dv; c0 += NR) {
                System.arraycopy(vd, src + c0, valuePanels, c0 * capacity + j * NR, Math.min(NR, dv - c0));
            }
        }
        keys = needed;
    }

    @Override
    public void truncate(int newLength) {
        keys = newLength;
        // Tiles below the cut keep their flags; the cut tile is rescanned, later ones cleared.
        int tile = newLength / AttentionKernel.BK;
        Arrays.fill(nonFiniteTiles, tile, nonFiniteTiles.length, false);
        for (int j = tile * AttentionKernel.BK; j < keys; j++) {
            for (int c0 = 0; c0 < dv; c0 += NR) {
                if (Kernels.ROWS.anyNonFinite(valuePanels, c0 * capacity + j * NR, Math.min(NR, dv - c0))) {
                    nonFiniteTiles[tile] = true;
                }
            }
        }
    }

    @Override
    public long storageBytes() {
        return 4L * (keyPanels.length + valuePanels.length) + nonFiniteTiles.length;
    }

    @Override
    boolean hasNonFiniteValues(int j0, int j1) {
        for (int t = j0 / AttentionKernel.BK; t * AttentionKernel.BK < j1; t++) {
            if (nonFiniteTiles[t]) {
                return true;
            }
        }
        return false;
    }

    private void allocate(int newCapacity) {
        capacity = newCapacity;
        keyPanels = new float[Kernels.roundUp(newCapacity, NR) * d];
        valuePanels = new float[newCapacity * dvPad];
        nonFiniteTiles = new boolean[(newCapacity + AttentionKernel.BK - 1) / AttentionKernel.BK];
    }

    private void grow(int newCapacity) {
        float[] oldKeys = keyPanels;
        float[] oldValues = valuePanels;
        boolean[] oldFlags = nonFiniteTiles;
        int oldCapacity = capacity;
        allocate(newCapacity);
        System.arraycopy(oldKeys, 0, keyPanels, 0, Kernels.roundUp(keys, NR) * d);
        for (int c0 = 0; c0 < dvPad; c0 += NR) {
            System.arraycopy(oldValues, c0 * oldCapacity, valuePanels, c0 * capacity, keys * NR);
        }
        System.arraycopy(oldFlags, 0, nonFiniteTiles, 0, oldFlags.length);
    }
}
