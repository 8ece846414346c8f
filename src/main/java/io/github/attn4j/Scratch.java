package io.github.attn4j;

/**
 * The calling thread's reusable intermediate buffers of a module call (the projected q | k | v
 * rows, the attention output before the output projection, and a result bound for a caller's
 * segment), so that same-shaped calls allocate only their result. A buffer is kept between calls
 * while it holds at most {@link #MAX_KEPT} floats (64 MiB); a larger one is allocated for the
 * call and dropped. Contents are not cleared: every user overwrites what it reads.
 */
final class Scratch {
    /** Floats a thread keeps per slot between calls. */
    static final int MAX_KEPT = 1 << 24;
    /** Slot of the projected q | k | v rows. */
    static final int PROJECTED = 0;
    /** Slot of the attention output (merged heads). */
    static final int ATTENDED = 1;
    /** Slot of a result bound for a caller's segment-backed tensor ({@code forward(..., out)}). */
    static final int OUTPUT = 2;

    private static final ThreadLocal<float[][]> BUFFERS = ThreadLocal.withInitial(() -> new float[3][0]);

    private Scratch() {
    }

    /** A buffer of at least {@code size} floats for {@code slot}, with arbitrary contents. */
    static float[] get(int slot, int size) {
        float[][] buffers = BUFFERS.get();
        if (buffers[slot].length >= size) {
            return buffers[slot];
        }
        float[] b = new float[size];
        if (size <= MAX_KEPT) {
            buffers[slot] = b;
        }
        return b;
    }
}
