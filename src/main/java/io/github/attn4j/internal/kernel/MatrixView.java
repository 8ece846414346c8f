package io.github.attn4j.internal.kernel;

import java.util.Objects;

/**
 * A read-only strided view of a matrix stored in a {@code float[]}: element {@code (r, c)} is
 * {@code data[offset + r * rowStride + c * colStride]}.
 *
 * <p>A row-major matrix with leading dimension {@code ld} has {@code rowStride = ld} and
 * {@code colStride = 1}; {@link #transpose()} swaps the dimensions and the strides, so a
 * transposed operand is read in place with no copy. The view never copies nor writes the array;
 * it keeps a reference to it, so later writes to the array are visible through the view.
 *
 * <p>Construction checks every index the view can reach: a view that exists never reads outside
 * its array. Zero-sized views (no rows or no columns) are legal; their offset must still lie in
 * {@code [0, data.length]}.
 */
public final class MatrixView {
    private final float[] data;
    private final int offset;
    private final int rows;
    private final int cols;
    private final int rowStride;
    private final int colStride;

    private MatrixView(float[] data, int offset, int rows, int cols, int rowStride, int colStride) {
        this.data = data;
        this.offset = offset;
        this.rows = rows;
        this.cols = cols;
        this.rowStride = rowStride;
        this.colStride = colStride;
    }

    /**
     * A view with arbitrary non-negative strides.
     *
     * @param data      the backing array, not copied
     * @param offset    index of element (0, 0)
     * @param rows      number of rows, {@code >= 0}
     * @param cols      number of columns, {@code >= 0}
     * @param rowStride distance between vertically adjacent elements, {@code >= 0}
     * @param colStride distance between horizontally adjacent elements, {@code >= 0}
     * @return the view
     * @throws NullPointerException     if {@code data} is null
     * @throws IllegalArgumentException if a dimension, stride or offset is negative, or if an
     *                                  element of the view lies outside {@code data}
     */
    public static MatrixView of(float[] data, int offset, int rows, int cols, int rowStride, int colStride) {
        Objects.requireNonNull(data, "data");
        requireNonNegative("rows", rows);
        requireNonNegative("cols", cols);
        requireNonNegative("rowStride", rowStride);
        requireNonNegative("colStride", colStride);
        requireNonNegative("offset", offset);
        if (rows == 0 || cols == 0) {
            if (offset > data.length) {
                throw new IllegalArgumentException("offset must be <= data.length (" + data.length
                        + ") for an empty view, got " + offset);
            }
        } else {
            long last = offset + (long) (rows - 1) * rowStride + (long) (cols - 1) * colStride;
            if (last >= data.length) {
                throw new IllegalArgumentException("data.length must be > " + last
                        + " (the last element offset + (rows - 1) * rowStride + (cols - 1) * colStride), got "
                        + data.length);
            }
        }
        return new MatrixView(data, offset, rows, cols, rowStride, colStride);
    }

    /**
     * A row-major view: element {@code (r, c)} is {@code data[offset + r * ld + c]}.
     *
     * @param ld leading dimension (distance between rows), {@code >= cols}
     * @throws NullPointerException     if {@code data} is null
     * @throws IllegalArgumentException if {@code ld < cols} or as in {@link #of}
     */
    public static MatrixView rowMajor(float[] data, int offset, int rows, int cols, int ld) {
        Objects.requireNonNull(data, "data");
        requireNonNegative("cols", cols);
        if (ld < cols) {
            throw new IllegalArgumentException("ld must be >= cols (" + cols + "), got " + ld);
        }
        return of(data, offset, rows, cols, ld, 1);
    }

    /** A dense row-major view of the whole matrix starting at index 0 ({@code ld = cols}). */
    public static MatrixView rowMajor(float[] data, int rows, int cols) {
        return rowMajor(data, 0, rows, cols, cols);
    }

    /** The transposed matrix over the same array: rows and columns, and their strides, swapped. */
    public MatrixView transpose() {
        return new MatrixView(data, offset, cols, rows, colStride, rowStride);
    }

    /**
     * Element {@code (r, c)}.
     *
     * @throws IndexOutOfBoundsException if {@code r} or {@code c} is outside the view
     */
    public float get(int r, int c) {
        Objects.checkIndex(r, rows);
        Objects.checkIndex(c, cols);
        return data[offset + r * rowStride + c * colStride];
    }

    /** Number of rows. */
    public int rows() {
        return rows;
    }

    /** Number of columns. */
    public int cols() {
        return cols;
    }

    /** Index of element (0, 0) in the backing array. */
    public int offset() {
        return offset;
    }

    /** Distance in the backing array between elements {@code (r, c)} and {@code (r + 1, c)}. */
    public int rowStride() {
        return rowStride;
    }

    /** Distance in the backing array between elements {@code (r, c)} and {@code (r, c + 1)}. */
    public int colStride() {
        return colStride;
    }

    /** The backing array; package-private so that the view stays read-only for callers. */
    float[] data() {
        return data;
    }

    @Override
    public String toString() {
        return "MatrixView[" + rows + " x " + cols + ", offset=" + offset + ", rowStride=" + rowStride
                + ", colStride=" + colStride + ", data.length=" + data.length + "]";
    }

    private static void requireNonNegative(String name, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + value);
        }
    }
}
