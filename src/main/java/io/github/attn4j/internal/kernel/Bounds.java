package io.github.attn4j.internal.kernel;

/** Range checks for the public kernel entry points, in long arithmetic so nothing overflows. */
final class Bounds {
    private Bounds() {
    }

    /** Checks that {@code rows} rows of {@code cols} floats, {@code ld} apart, starting at {@code offset}, lie in {@code array}. */
    static void rows(String name, float[] array, int offset, int rows, int cols, int ld) {
        if (array == null) {
            throw new NullPointerException(name + " must not be null");
        }
        if (rows < 0 || cols < 0 || offset < 0 || ld < cols) {
            throw new IllegalArgumentException(name + ": expected offset >= 0, rows >= 0, cols >= 0 and ld >= cols, got offset="
                    + offset + ", rows=" + rows + ", cols=" + cols + ", ld=" + ld);
        }
        if (rows == 0 || cols == 0) {
            return;
        }
        long end = offset + (long) (rows - 1) * ld + cols;
        if (end > array.length) {
            throw new IllegalArgumentException(name + ": expected at least " + end + " elements for " + rows + " rows of "
                    + cols + " (ld " + ld + ", offset " + offset + "), got length " + array.length);
        }
    }
}
