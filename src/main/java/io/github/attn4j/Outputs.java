package io.github.attn4j;

import java.util.Arrays;

/**
 * Results written into a caller's tensor (the {@code out} overloads of
 * {@link MultiHeadAttention#forward} and {@link ScaledDotProductAttention#attend}): the check of
 * {@code out}, and where the kernels write. An array-backed {@code out} is written in place; a
 * segment-backed one, or one whose array the computation also reads, receives the result from
 * the calling thread's {@link Scratch#OUTPUT} buffer in one bulk copy, so none allocates a result
 * per call.
 */
final class Outputs {
    private Outputs() {
    }

    /**
     * Checks that {@code out} is non-null, writable and of shape {@code (d0, d1, ...)}.
     *
     * @throws NullPointerException     if {@code out} is null
     * @throws IllegalArgumentException naming {@code out}, the expected and the actual shape
     */
    static void check(Tensor out, String layout, int... expected) {
        Checks.notNull(out, "out");
        boolean same = out.rank() == expected.length;
        for (int i = 0; same && i < expected.length; i++) {
            same = out.dim(i) == expected[i];
        }
        if (!same) {
            throw new IllegalArgumentException("out: expected shape " + Arrays.toString(expected) + " " + layout
                    + ", got shape " + Arrays.toString(out.shape()));
        }
        Checks.check(!out.isReadOnly(), "out", "a writable tensor", "a tensor over a read-only segment");
    }

    /**
     * Where to compute {@code out}'s elements: its own array, or the calling thread's scratch when
     * {@code out} is over a segment or {@code aliased} (its array is also read by the computation).
     */
    static float[] buffer(Tensor out, boolean aliased) {
        float[] array = out.array();
        return array != null && !aliased ? array : Scratch.get(Scratch.OUTPUT, out.size());
    }

    /** Completes a result computed into {@link #buffer}: copies it into {@code out} unless it is {@code out}'s own array. */
    static void publish(Tensor out, float[] buffer) {
        if (buffer != out.array()) {
            out.copyFrom(buffer);
        }
    }
}
