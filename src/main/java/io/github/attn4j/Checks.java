package io.github.attn4j;

import java.util.Arrays;
import java.util.Objects;

/**
 * Argument checks shared by the public entry points. Every failure names the argument and gives
 * the expected and the actual value, so a caller can fix the call from the message alone.
 */
final class Checks {
    /**
     * The most elements a tensor or any buffer attn4j allocates may hold: the largest
     * {@code float[]} every JVM can allocate ({@code Integer.MAX_VALUE - 8}).
     */
    static final int MAX_ELEMENTS = Integer.MAX_VALUE - 8;

    private Checks() {
    }

    static <T> T notNull(T value, String name) {
        return Objects.requireNonNull(value, () -> name + " must not be null");
    }

    /**
     * Throws {@link #fail} unless {@code ok}. For constant messages only: arguments are evaluated
     * before the call, so a message built by concatenation belongs in {@code if (...) throw fail(...)}
     * instead, which builds it only on failure and keeps the calls free of garbage.
     */
    static void check(boolean ok, String name, String expected, Object actual) {
        if (!ok) {
            throw fail(name, expected, actual);
        }
    }

    /** The exception for argument {@code name}: what was expected and what it got. */
    static IllegalArgumentException fail(String name, String expected, Object actual) {
        return new IllegalArgumentException(name + ": expected " + expected + ", got " + describe(actual));
    }

    static int positive(int value, String name) {
        check(value > 0, name, "a positive value", value);
        return value;
    }

    static void rank(Tensor t, int rank, String name, String layout) {
        notNull(t, name);
        if (t.rank() != rank) {
            throw fail(name, "rank " + rank + " " + layout, "shape " + Arrays.toString(t.shape()));
        }
    }

    static void dim(Tensor t, int axis, int expected, String name, String what) {
        if (t.dim(axis) != expected) {
            throw new IllegalArgumentException(name + ": expected " + what + " = " + expected + " at axis " + axis
                    + ", got shape " + Arrays.toString(t.shape()));
        }
    }

    /** Product of the dims as an int, or an exception naming {@code name} when it exceeds {@link #MAX_ELEMENTS}. */
    static int elementCount(String name, long... dims) {
        for (long d : dims) {
            if (d < 0) {
                throw fail(name, "non-negative dimensions", Arrays.toString(dims));
            }
            if (d == 0) {
                return 0;
            }
        }
        long n = 1;
        for (long d : dims) {
            n *= d;
            if (n > MAX_ELEMENTS) {
                throw new IllegalArgumentException(name + ": element count of " + Arrays.toString(dims)
                        + " exceeds the limit of " + MAX_ELEMENTS + " elements (Integer.MAX_VALUE - 8, the largest"
                        + " float[] a JVM allocates; attn4j indexes tensors by int)");
            }
        }
        return (int) n;
    }

    static void length(float[] array, long expected, String name, String layout) {
        notNull(array, name);
        if (array.length != expected) {
            throw new IllegalArgumentException(name + ": expected length " + expected + " " + layout
                    + ", got " + array.length);
        }
    }

    private static String describe(Object actual) {
        if (actual instanceof int[] a) {
            return Arrays.toString(a);
        }
        return String.valueOf(actual);
    }
}
