package io.github.attn4j;

import io.github.attn4j.kernel.HeadLayout;
import io.github.attn4j.kernel.KeyValuePanels;

/**
 * Projected keys and values of the tokens a {@link MultiHeadAttention} has seen so far, per batch
 * row, for incremental decoding with {@link MultiHeadAttention#forwardCached}. Each (batch row,
 * key/value head) keeps its keys and values in the attention kernel's packed panel layout, so a
 * decoding step appends its token and reads the cache in place, with no repacking; the room
 * doubles when a call needs more.
 *
 * <p>A cache is mutable and belongs to the module that made it: use it from one thread at a
 * time (the module itself may be shared).
 */
public final class KvCache {
    private final MultiHeadAttention owner;
    private final int batch;
    private final int heads;
    private final int headDim;
    private final KeyValuePanels[] panels;
    private int capacity;
    private int length;

    KvCache(MultiHeadAttention owner, int batch, int capacity, int heads, int headDim) {
        this.owner = owner;
        this.batch = batch;
        this.heads = heads;
        this.headDim = headDim;
        this.capacity = capacity;
        checkCapacity("capacity", capacity, headDim);
        this.panels = new KeyValuePanels[Checks.elementCount("cache (B, KVH)", batch, heads)];
        for (int i = 0; i < panels.length; i++) {
            panels[i] = new KeyValuePanels(headDim, headDim, capacity);
        }
    }

    /**
     * A standalone cache (for {@link ScaledDotProductAttention#attend(Tensor, KvCache, AttentionMask)} users).
     *
     * @param batch    number of sequences (batch rows)
     * @param kvHeads  number of key/value heads
     * @param headDim  width of each key and value
     * @param capacity tokens per row before the cache grows
     * @return a new, empty cache
     */
    public static KvCache create(int batch, int kvHeads, int headDim, int capacity) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Number of tokens row {@code row} holds.
     *
     * @param row batch row
     * @return the number of tokens that row holds
     */
    public int length(int row) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Appends {@code k, v (B, KVH, T, d)}: T tokens to every row.
     *
     * @param k keys {@code (B, KVH, T, d)}
     * @param v values {@code (B, KVH, T, d)}
     */
    public void append(Tensor k, Tensor v) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Row {@code b} appends the first {@code tokens[b]} of its T tokens (0: the row sits out).
     *
     * @param k      keys {@code (B, KVH, T, d)}
     * @param v      values {@code (B, KVH, T, d)}
     * @param tokens per batch row, how many of the T tokens it appends
     */
    public void append(Tensor k, Tensor v, int[] tokens) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Forgets row {@code row}'s tokens from {@code newLength} on.
     *
     * @param row       batch row
     * @param newLength number of tokens the row keeps
     */
    public void truncate(int row, int newLength) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Empties row {@code row}: its slot starts a new sequence.
     *
     * @param row batch row
     */
    public void reset(int row) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Number of cached tokens per batch row.
     *
     * @return the number of tokens each batch row holds
     */
    public int length() {
        return length;
    }

    /**
     * Tokens per batch row the cache holds before it grows.
     *
     * @return the number of tokens per batch row that fit before the cache grows
     */
    public int capacity() {
        return capacity;
    }

    /**
     * Number of batch rows.
     *
     * @return the number of batch rows
     */
    public int batch() {
        return batch;
    }

    /**
     * Forgets every token from position {@code newLength} on (for rolling back a speculative or
     * rejected continuation); the capacity stays.
     *
     * @param newLength number of tokens to keep
     * @throws IllegalArgumentException unless {@code 0 <= newLength <= length()}
     */
    public void truncate(int newLength) {
        Checks.check(newLength >= 0 && newLength <= length, "newLength", "a length in [0, " + length + "]", newLength);
        for (KeyValuePanels p : panels) {
            p.truncate(newLength);
        }
        length = newLength;
    }

    MultiHeadAttention owner() {
        return owner;
    }

    /** Checks that {@code tokens} more tokens fit the size limits, before anything is computed. */
    void checkRoom(int tokens) {
        checkCapacity("cached length + new tokens", (long) length + tokens, headDim);
    }

    /**
     * Appends the keys and values of {@code k.length()} new tokens per batch row, packed straight
     * into the panels the attention kernel reads.
     */
    void append(HeadLayout k, HeadLayout v) {
        for (int b = 0; b < batch; b++) {
            for (int g = 0; g < heads; g++) {
                panels[b * heads + g].append(k, v, b, g);
            }
        }
        length += k.length();
        capacity = panels.length > 0 ? panels[0].capacity() : Math.max(capacity, length);
    }

    private static void checkCapacity(String name, long tokens, int headDim) {
        int max = KeyValuePanels.maxCapacity(headDim, headDim, Checks.MAX_ELEMENTS);
        Checks.check(tokens <= max, name, "at most " + max + " tokens (each (batch, kv head) keeps its keys and values"
                + " in arrays of at most " + Checks.MAX_ELEMENTS + " floats)", tokens);
    }

    /**
     * SKELETON: appends, for each batch row b, the first {@code tokens[b]} tokens of the layouts
     * (all rows when {@code tokens} is null), already validated.
     */
    void append(HeadLayout k, HeadLayout v, int[] tokens) {
        throw new UnsupportedOperationException("not yet");
    }

    /** Checks that row b can take {@code tokens[b]} more tokens (every row {@code t} when tokens is null). */
    void checkRoom(int t, int[] tokens) {
        throw new UnsupportedOperationException("not yet");
    }

    /**
     * Number of kv heads.
     *
     * @return the number of key/value heads
     */
    public int kvHeads() {
        return heads;
    }

    /**
     * Width of each key and value.
     *
     * @return the width of each key and value
     */
    public int headDim() {
        return headDim;
    }

    /** The packed keys and values, one per (batch, kv head) at {@code b * KVH + g}. */
    KeyValuePanels[] panels() {
        return panels;
    }
}
