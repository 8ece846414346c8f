package io.github.attn4j.internal.kernel;

/**
 * What one calling thread's attention calls reuse from call to call, so that a steady stream of
 * same-shaped calls allocates nothing big: the key/value panels packed from head layouts, one
 * {@link TileState} per worker slot, and the partial softmax states of split tasks.
 *
 * <p>Memory is bounded: the panels are kept only while their floats stay within
 * {@link #MAX_RETAINED} (a call that needs more packs into fresh panels that are dropped after
 * it), tile states are 70 to 150 KiB each (query and score tiles of up to 48 x 256 floats and
 * the accumulator; up to 120 KiB more once they have scored key tiles ahead,
 * {@link TileState#scoreTile}), and partials are kept within the same bound. A
 * workspace belongs to the calling thread ({@link #current()}); the pool threads that help a call
 * use the tile states of that call's caller, never their own, except when a chunked module call
 * runs whole one-thread attention calls on them (one chunk of an encoder batch each): then a pool
 * thread keeps one source's panels and one tile state of its own.
 */
final class AttentionWorkspace {
    /** Floats of packed panels and partials a thread keeps between calls: 16 Mi floats, 64 MiB. */
    static final long MAX_RETAINED = 1L << 24;

    private static final ThreadLocal<AttentionWorkspace> CURRENT = ThreadLocal.withInitial(AttentionWorkspace::new);

    private KeyValuePanels[] panels = new KeyValuePanels[0];
    private TileState[] states = new TileState[0];
    private Partials partials;
    private long partialsSize;

    static AttentionWorkspace current() {
        return CURRENT.get();
    }

    /**
     * {@code count} panels for keys of width {@code d}, values of width {@code dv} and up to
     * {@code keys} keys each, empty; reused when they fit and the total stays within the bound.
     */
    KeyValuePanels[] panels(int count, int d, int dv, int keys) {
        long floats = (long) count * ((long) Kernels.roundUp(Math.max(keys, 1), Kernels.NR) * d
                + (long) Kernels.roundUp(keys, AttentionKernel.BK) * KeyValueSource.paddedWidth(dv));
        boolean retain = floats <= MAX_RETAINED;
        KeyValuePanels[] result = retain && panels.length >= count ? panels : new KeyValuePanels[count];
        for (int i = 0; i < count; i++) {
            KeyValuePanels p = result[i];
            if (p == null || p.d != d || p.dv != dv || p.capacity() < keys) {
                result[i] = new KeyValuePanels(d, dv, keys);
            }
        }
        if (retain) {
            panels = result;
        }
        return result;
    }

    /** The tile states of a call on {@code workers} workers, created for its widths as needed. */
    TileState[] states(int workers, int d, int dvPad, boolean online) {
        if (states.length < workers) {
            states = java.util.Arrays.copyOf(states, workers);
        }
        for (int w = 0; w < workers; w++) {
            if (states[w] == null || !states[w].fits(d, dvPad, online)) {
                states[w] = new TileState(d, dvPad, online);
            }
        }
        return states;
    }

    /** Partial states for {@code tasks} tasks of up to {@code rows} rows of {@code dvPad} values. */
    Partials partials(int tasks, int rows, int dvPad) {
        long size = (long) tasks * rows * dvPad;
        if (partials != null && partials.fits(tasks, rows, dvPad)) {
            return partials;
        }
        Partials p = new Partials(tasks, rows, dvPad);
        if (size <= MAX_RETAINED && size >= partialsSize) {
            partials = p;
            partialsSize = size;
        }
        return p;
    }
}
