package io.github.attn4j;

import io.github.attn4j.internal.kernel.HalfPanels;
import io.github.attn4j.internal.kernel.HeadLayout;
import io.github.attn4j.internal.kernel.Int8Panels;
import io.github.attn4j.internal.kernel.KeyValuePanels;
import io.github.attn4j.internal.kernel.KeyValueSource;
import io.github.attn4j.internal.kernel.Parallel;

/**
 * Keys and values of the tokens seen so far, per batch row and key/value head, for incremental
 * decoding with {@link MultiHeadAttention#forwardCached} or
 * {@link ScaledDotProductAttention#attend(Tensor, KvCache, AttentionMask)}. Each (row, kv head)
 * keeps its keys and values in the attention kernel's packed panel layout, so a decoding step
 * appends its tokens and reads the cache in place, with no repacking; a row's room doubles when
 * an append needs more.
 *
 * <p><b>Precision.</b> Keys and values are stored as float32 by default, or narrower
 * ({@link Precision}: F16, BF16, INT8), rounded once when appended and widened back to float32
 * tile by tile as the attention reads them: half (F16, BF16) or 0.28x (INT8) of the memory and
 * of the bytes each decoding step streams. Attention over an F16 or BF16 cache gives the same bits
 * as over a float32 cache holding the rounded values; over an INT8 cache it agrees with that
 * within float rounding (its scores apply each block's scale once, see {@link Precision#INT8}).
 *
 * <p><b>Rows are independent sequences.</b> Each batch row has its own length: an append may
 * give rows different numbers of tokens ({@link #append(Tensor, Tensor, int[])}, 0 lets a row
 * sit out), {@link #truncate(int, int)} rolls one row back and {@link #reset(int)} empties its
 * slot for a new sequence. Attention over the cache gives each row what it would get alone, and
 * costs what its own length costs (no padding to the longest row): many conversations can be
 * decoded in one call (continuous batching).
 *
 * <p>A cache is mutable: use it from one thread at a time (modules may be shared).
 */
public final class KvCache {
    /**
     * Values (keys and values together) from which a module's append uses its threads: a
     * decode step of one conversation appends a few thousand, less than handing tasks to a
     * helper costs; 32 conversations of 8 kv heads of 128 append 65536, which took 0.73 to 0.97x
     * the step's time on two threads (jmh/README.md, "Truncating, and appending to narrow
     * caches"). System property {@code attn4j.appendSplitValues} sets another bound (the
     * forced-path test runs set 0, so that their small appends still use every thread).
     */
    static final long SPLIT_APPEND_VALUES = Math.max(0L, Long.getLong("attn4j.appendSplitValues", 1L << 14));

    private final MultiHeadAttention owner;
    private final int batch;
    private final int heads;
    private final int headDim;
    private final Precision precision;
    private final KeyValueSource[] panels;
    private final int[] lengths;

    KvCache(MultiHeadAttention owner, int batch, int heads, int headDim, int capacity) {
        this(owner, batch, heads, headDim, capacity, Precision.F32);
    }

    KvCache(MultiHeadAttention owner, int batch, int heads, int headDim, int capacity, Precision precision) {
        Checks.check(batch >= 0, "batch", "a non-negative batch size", batch);
        Checks.check(capacity >= 0, "capacity", "a non-negative capacity", capacity);
        this.owner = owner;
        this.batch = batch;
        this.heads = heads;
        this.headDim = headDim;
        this.precision = Checks.notNull(precision, "precision");
        checkCapacity("capacity", capacity, headDim);
        this.panels = new KeyValueSource[Checks.elementCount("cache (B, KVH)", batch, heads)];
        for (int i = 0; i < panels.length; i++) {
            panels[i] = switch (precision) {
                case F32 -> new KeyValuePanels(headDim, headDim, capacity);
                case F16 -> HalfPanels.f16(headDim, headDim, capacity);
                case BF16 -> HalfPanels.bf16(headDim, headDim, capacity);
                case INT8 -> new Int8Panels(headDim, headDim, capacity);
            };
        }
        this.lengths = new int[batch];
    }

    /**
     * A cache of {@code batch} rows, {@code kvHeads} key/value heads of width {@code headDim},
     * with room for {@code capacity} tokens per row before it grows: for callers of
     * {@link ScaledDotProductAttention#attend(Tensor, KvCache, AttentionMask)}, who append their
     * own keys and values. {@link MultiHeadAttention#forwardCached} accepts it too when the
     * heads and width match.
     *
     * @param batch the number of rows
     * @param kvHeads the number of key/value heads
     * @param headDim the width of each key and value
     * @param capacity the tokens per row before the cache grows
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code batch} or {@code capacity} is negative, or
     *                                  {@code kvHeads} or {@code headDim} is not positive
     */
    public static KvCache create(int batch, int kvHeads, int headDim, int capacity) {
        return create(batch, kvHeads, headDim, capacity, Precision.F32);
    }

    /**
     * Like {@link #create(int, int, int, int)}, storing keys and values in {@code precision}.
     *
     * @param batch     number of batch rows
     * @param kvHeads   number of key/value heads
     * @param headDim   width of each key and value
     * @param capacity  tokens per row before the cache grows
     * @param precision how keys and values are stored
     * @return a new, empty cache
     * @throws IllegalArgumentException if {@code batch} or {@code capacity} is negative, or
     *                                  {@code kvHeads} or {@code headDim} is not positive
     * @throws NullPointerException     if {@code precision} is null
     */
    public static KvCache create(int batch, int kvHeads, int headDim, int capacity, Precision precision) {
        return new KvCache(null, batch, Checks.positive(kvHeads, "kvHeads"), Checks.positive(headDim, "headDim"), capacity,
                precision);
    }

    /**
     * How keys and values are stored.
     *
     * @return the storage precision
     */
    public Precision precision() {
        return precision;
    }

    /**
     * Bytes of the arrays that hold the cached keys and values, with their bookkeeping (INT8
     * scales, per-tile flags): what the cache's capacity costs in memory.
     *
     * @return the bytes held by the cache's arrays
     */
    public long storageBytes() {
        long bytes = 0;
        for (KeyValueSource p : panels) {
            bytes += p.storageBytes();
        }
        return bytes;
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
     * Number of key/value heads.
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

    /**
     * Number of tokens row {@code row} holds.
     *
     * @param row the batch row
     * @return the number of tokens the row holds
     * @throws IllegalArgumentException if {@code row} is not in {@code [0, batch())}
     */
    public int length(int row) {
        checkRow(row);
        return lengths[row];
    }

    /**
     * The longest row's number of tokens (every row's, when all rows took every token).
     *
     * @return the longest row's number of tokens
     */
    public int length() {
        int max = 0;
        for (int len : lengths) {
            max = Math.max(max, len);
        }
        return max;
    }

    /**
     * Tokens the smallest row holds before it grows.
     *
     * @return the smallest row's capacity in tokens
     */
    public int capacity() {
        int min = Integer.MAX_VALUE;
        for (KeyValueSource p : panels) {
            min = Math.min(min, p.capacity());
        }
        return panels.length == 0 ? 0 : min;
    }

    /**
     * Appends {@code k, v} {@code (B, KVH, T, headDim)}: T tokens to every row.
     *
     * @param k keys {@code (B, KVH, T, headDim)}
     * @param v values {@code (B, KVH, T, headDim)}
     * @throws IllegalArgumentException if the shapes do not match the cache, a row would pass the
     *                                  size limit, or the cache's precision cannot hold a value
     *                                  (see {@link Precision}); nothing is appended then
     */
    public void append(Tensor k, Tensor v) {
        append(k, v, null);
    }

    /**
     * Appends to row {@code b} the first {@code tokens[b]} of the T tokens of {@code k, v}
     * {@code (B, KVH, T, headDim)}; 0 lets the row sit out.
     *
     * @param k keys {@code (B, KVH, T, headDim)}
     * @param v values {@code (B, KVH, T, headDim)}
     * @param tokens the number of tokens each row takes
     * @throws IllegalArgumentException if the shapes do not match the cache, {@code tokens} has
     *                                  not one entry per row, an entry is outside {@code [0, T]},
     *                                  a row would pass the size limit, or the cache's precision
     *                                  cannot hold a value (see {@link Precision}); nothing is
     *                                  appended then
     */
    public void append(Tensor k, Tensor v, int[] tokens) {
        Checks.rank(k, 4, "k", "(B, KVH, T, headDim)");
        Checks.rank(v, 4, "v", "(B, KVH, T, headDim)");
        Checks.dim(k, 0, batch, "k", "batch B of the cache");
        Checks.dim(k, 1, heads, "k", "kvHeads of the cache");
        Checks.dim(k, 3, headDim, "k", "headDim of the cache");
        if (!java.util.Arrays.equals(v.shape(), k.shape())) {
            throw Checks.fail("v", "the shape of k " + java.util.Arrays.toString(k.shape()),
                    java.util.Arrays.toString(v.shape()));
        }
        int t = k.dim(2);
        checkTokens(tokens, t);
        checkRoom(t, tokens);
        append(HeadLayout.headsMajor(k.data(), batch, heads, t, headDim),
                HeadLayout.headsMajor(v.data(), batch, heads, t, headDim), tokens);
    }

    /**
     * Forgets row {@code row}'s tokens from position {@code newLength} on (rolling back a
     * rejected continuation); its room stays.
     *
     * @param row the batch row
     * @param newLength the row's new length
     * @throws IllegalArgumentException unless {@code 0 <= row < batch()} and
     *                                  {@code 0 <= newLength <= length(row)}
     */
    public void truncate(int row, int newLength) {
        checkRow(row);
        if (!(newLength >= 0 && newLength <= lengths[row])) {
            throw Checks.fail("newLength",
                    "a length in [0, " + lengths[row] + "] (row " + row + ")", newLength);
        }
        for (int g = 0; g < heads; g++) {
            panels[row * heads + g].truncate(newLength);
        }
        lengths[row] = newLength;
    }

    /**
     * Forgets every row's tokens from position {@code newLength} on.
     *
     * @param newLength every row's new length
     * @throws IllegalArgumentException unless {@code 0 <= newLength <= length(b)} for every row b
     */
    public void truncate(int newLength) {
        int shortest = Integer.MAX_VALUE;
        for (int len : lengths) {
            shortest = Math.min(shortest, len);
        }
        if (!(newLength >= 0 && newLength <= (batch == 0 ? 0 : shortest))) {
            throw Checks.fail("newLength",
                    "a length in [0, " + (batch == 0 ? 0 : shortest) + "]", newLength);
        }
        for (int b = 0; b < batch; b++) {
            truncate(b, newLength);
        }
    }

    /**
     * Empties row {@code row}: its slot starts a new sequence; its room stays.
     *
     * @param row the batch row
     * @throws IllegalArgumentException unless {@code 0 <= row < batch()}
     */
    public void reset(int row) {
        truncate(row, 0);
    }

    /** The module that made this cache, or null for a standalone one. */
    MultiHeadAttention owner() {
        return owner;
    }

    /** Each row's number of tokens (a copy). */
    int[] lengths() {
        return lengths.clone();
    }

    /** Checks {@code tokens}: null, or one count in {@code [0, t]} per row. */
    void checkTokens(int[] tokens, int t) {
        if (tokens == null) {
            return;
        }
        if (tokens.length != batch) {
            throw Checks.fail("tokens", "one count per batch row (" + batch + ")", "length " + tokens.length);
        }
        for (int b = 0; b < batch; b++) {
            if (!(tokens[b] >= 0 && tokens[b] <= t)) {
                throw Checks.fail("tokens[" + b + "]", "a count in [0, T = " + t + "]", tokens[b]);
            }
        }
    }

    /** Checks that row b can take {@code tokens[b]} more tokens (every row {@code t} when tokens is null), before anything is computed. */
    void checkRoom(int t, int[] tokens) {
        for (int b = 0; b < batch; b++) {
            checkCapacity("length(" + b + ") + new tokens", (long) lengths[b] + (tokens == null ? t : tokens[b]), headDim);
        }
    }

    /**
     * Appends, for each batch row b, the first {@code tokens[b]} tokens of the layouts (all of
     * them when {@code tokens} is null), packed straight into the panels the kernel reads; the
     * counts are already checked. Every value is checked against the precision before any is
     * appended, so a rejected append changes nothing.
     *
     * @throws IllegalArgumentException if the precision cannot hold a value
     */
    void append(HeadLayout k, HeadLayout v, int[] tokens) {
        append(k, v, tokens, 1);
    }

    /**
     * {@link #append(HeadLayout, HeadLayout, int[])}, the (batch row, kv head) panels shared
     * between up to {@code threads} threads once there are at least {@link #SPLIT_APPEND_VALUES}
     * values to append: each panel is written by one task, so the contents do not depend on the
     * schedule. The checks stay on the calling thread, in order, so a rejected append names the
     * same value on every thread count.
     */
    void append(HeadLayout k, HeadLayout v, int[] tokens, int threads) {
        long values = 0;
        for (int b = 0; b < batch; b++) {
            values += (long) count(k, tokens, b) * heads * 2 * headDim;
            for (int g = 0; g < heads; g++) {
                panels[b * heads + g].checkAppend(k, v, b, g, count(k, tokens, b));
            }
        }
        Parallel.forEach(values >= SPLIT_APPEND_VALUES ? threads : 1, batch * heads, (i, worker) ->
                panels[i].append(k, v, i / heads, i % heads, count(k, tokens, i / heads)));
        for (int b = 0; b < batch; b++) {
            lengths[b] += count(k, tokens, b);
        }
    }

    /** Tokens row {@code b} appends: {@code tokens[b]}, or all of the layout's when {@code tokens} is null. */
    private static int count(HeadLayout k, int[] tokens, int b) {
        return tokens == null ? k.length() : tokens[b];
    }

    /** The packed keys and values, one per (batch row, kv head) at {@code b * KVH + g}. */
    KeyValueSource[] panels() {
        return panels;
    }

    private void checkRow(int row) {
        if (!(row >= 0 && row < batch)) {
            throw Checks.fail("row", "a batch row in [0, " + batch + ")", row);
        }
    }

    private static void checkCapacity(String name, long tokens, int headDim) {
        int max = KeyValueSource.maxCapacity(headDim, headDim, Checks.MAX_ELEMENTS);
        if (tokens > max) {
            throw Checks.fail(name, "at most " + max + " tokens (each (batch, kv head) keeps its keys and values"
                    + " in arrays of at most " + Checks.MAX_ELEMENTS + " floats)", tokens);
        }
    }
}
