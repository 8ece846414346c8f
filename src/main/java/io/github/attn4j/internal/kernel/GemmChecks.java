package io.github.attn4j.internal.kernel;

import java.util.Objects;

/**
 * The argument checks of {@link Gemm}'s entry points: null operands, shapes that do not chain,
 * a C window outside its array, a row range outside A, a short bias, a thread count below one.
 */
final class GemmChecks {
    private GemmChecks() {
    }

    /** The checks of a product of rows {@code [firstRow, firstRow + rows)} of {@code a} with a packed {@code b}. */
    static void rows(MatrixView a, int firstRow, int rows, PackedMatrix b, float[] bias, float[] c,
                     int cOffset, int ldc, int threads) {
        Objects.requireNonNull(b, "b");
        Objects.requireNonNull(a, "a");
        if (firstRow < 0 || rows < 0 || firstRow > a.rows() - rows) {
            throw new IllegalArgumentException("rows: expected a range within the " + a.rows() + " rows of a, got ["
                    + firstRow + ", " + ((long) firstRow + rows) + ")");
        }
        operands(a, rows, b.rows(), b.cols(), c, cOffset, ldc);
        if (bias != null && bias.length < b.cols()) {
            throw new IllegalArgumentException("bias.length must be >= b.cols() (" + b.cols() + "), got " + bias.length);
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
    }

    /** The checks of a product of all of {@code a} with a {@code bRows x bCols} B. */
    static void operands(MatrixView a, int bRows, int bCols, float[] c, int cOffset, int ldc) {
        operands(Objects.requireNonNull(a, "a"), a.rows(), bRows, bCols, c, cOffset, ldc);
    }

    /** The checks for a product of {@code m} rows of {@code a} (already checked not null). */
    static void operands(MatrixView a, int m, int bRows, int bCols, float[] c, int cOffset, int ldc) {
        Objects.requireNonNull(c, "c");
        if (a.cols() != bRows) {
            throw new IllegalArgumentException("a.cols() must equal b.rows() (" + bRows + "), got a.cols() = "
                    + a.cols());
        }
        if (ldc < bCols) {
            throw new IllegalArgumentException("ldc must be >= b.cols() (" + bCols + "), got " + ldc);
        }
        if (cOffset < 0) {
            throw new IllegalArgumentException("cOffset must be >= 0, got " + cOffset);
        }
        long needed = m == 0 || bCols == 0 ? cOffset : cOffset + (long) (m - 1) * ldc + bCols;
        if (needed > c.length) {
            throw new IllegalArgumentException("c.length must be >= " + needed
                    + " (cOffset + (rows - 1) * ldc + b.cols()), got " + c.length);
        }
    }
}
