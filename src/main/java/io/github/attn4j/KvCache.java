package io.github.attn4j;

import io.github.attn4j.kernel.HeadLayout;

/**
 * Projected keys and values of the tokens a {@link MultiHeadAttention} has seen so far, per batch
 * row, for incremental decoding with {@link MultiHeadAttention#forwardCached}. Storage is
 * {@code (B, capacity, KVH·hd)} for keys and for values; it doubles when a call needs more room.
 *
 * <p>A cache is mutable and belongs to the module that made it: use it from one thread at a
 * time (the module itself may be shared).
 */
public final class KvCache {
    private final MultiHeadAttention owner;
    private final int batch;
    private final int width;
    private float[] keys;
    private float[] values;
    private int capacity;
    private int length;

    KvCache(MultiHeadAttention owner, int batch, int capacity, int width) {
        this.owner = owner;
        this.batch = batch;
        this.width = width;
        this.capacity = capacity;
        int size = Checks.elementCount("cache (B, capacity, KVH*hd)", batch, capacity, width);
        this.keys = new float[size];
        this.values = new float[size];
    }

    /** Number of cached tokens per batch row. */
    public int length() {
        return length;
    }

    /** Tokens per batch row the cache holds before it grows. */
    public int capacity() {
        return capacity;
    }

    /** Number of batch rows. */
    public int batch() {
        return batch;
    }

    /**
     * Forgets every token from position {@code newLength} on (for rolling back a speculative or
     * rejected continuation); the capacity stays.
     *
     * @throws IllegalArgumentException unless {@code 0 <= newLength <= length()}
     */
    public void truncate(int newLength) {
        Checks.check(newLength >= 0 && newLength <= length, "newLength", "a length in [0, " + length + "]", newLength);
        length = newLength;
    }

    MultiHeadAttention owner() {
        return owner;
    }

    /**
     * Appends {@code tokens} tokens per batch row whose keys and values are rows of
     * {@code width} floats in {@code source}: token {@code t} of row {@code b} at
     * {@code source[(b * tokens + t) * rowStride + keyColumn]} (and {@code valueColumn}).
     */
    void append(float[] source, int tokens, int rowStride, int keyColumn, int valueColumn) {
        int needed = length + tokens;
        if (needed > capacity) {
            grow(Math.max(needed, (int) Math.min(Integer.MAX_VALUE, 2L * capacity)));
        }
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < tokens; t++) {
                int src = (b * tokens + t) * rowStride;
                int dst = (b * capacity + length + t) * width;
                System.arraycopy(source, src + keyColumn, keys, dst, width);
                System.arraycopy(source, src + valueColumn, values, dst, width);
            }
        }
        length = needed;
    }

    /** The cached keys as heads of width {@code headDim}. */
    HeadLayout keys(int heads, int headDim) {
        return new HeadLayout(keys, 0, batch, length, heads, headDim, capacity * width, width, headDim);
    }

    /** The cached values as heads of width {@code headDim}. */
    HeadLayout values(int heads, int headDim) {
        return new HeadLayout(values, 0, batch, length, heads, headDim, capacity * width, width, headDim);
    }

    private void grow(int newCapacity) {
        int size = Checks.elementCount("cache (B, capacity, KVH*hd)", batch, newCapacity, width);
        float[] k = new float[size];
        float[] v = new float[size];
        for (int b = 0; b < batch; b++) {
            System.arraycopy(keys, b * capacity * width, k, b * newCapacity * width, length * width);
            System.arraycopy(values, b * capacity * width, v, b * newCapacity * width, length * width);
        }
        keys = k;
        values = v;
        capacity = newCapacity;
    }
}
