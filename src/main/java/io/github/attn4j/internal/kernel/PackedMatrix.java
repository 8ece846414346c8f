package io.github.attn4j.internal.kernel;

/**
 * A right-hand GEMM operand B ({@code K x N}) copied once into the micro-kernel's panel layout,
 * for reuse across many {@link Gemm#multiply(MatrixView, PackedMatrix, float[], int, int, boolean)}
 * calls (typically a constant weight matrix). Created by {@link Gemm#pack(MatrixView)}.
 *
 * <p>Layout: the K dimension is cut into blocks of depth {@code kc} (the last may be shorter); the
 * block starting at row {@code pc} occupies {@code [pc * paddedCols, (pc + kc) * paddedCols)},
 * where {@code paddedCols} is N rounded up to a multiple of {@link Kernels#NR}. Inside a
 * block, the NR-column panel starting at column {@code j} begins at {@code j * kc}, and stores row
 * {@code p} of the panel as NR consecutive floats, zero-padded past column N. Any run of
 * consecutive panels of a block is therefore exactly what {@link Packing#packB} would produce for
 * that column range, so {@link Gemm} reads the packed blocks in place.
 *
 * <p>{@link #columns(int, int)} gives a range of columns, starting at a panel boundary, as a
 * matrix of its own that shares the packed floats: its panels are the parent's panels of that
 * range, read in place.
 *
 * <p>The panels hold float32 values, or 16-bit floats ({@link Format#F16}, {@link Format#BF16}) in
 * the same layout (BF16 rows in the order of {@link Packing#halfSlot}, F16 rows in column order,
 * which the processor's own conversion widens: {@link HalfFloat#fromF16(short[], int, float[], int, int)}),
 * one {@code short} per element: half the bytes, widened exactly to float32 by
 * {@link Gemm} as it reads them, so a product with a 16-bit matrix has the bits of the product
 * with the float32 matrix of the same (rounded) values.
 *
 * <p>The first block starts {@link #pad(Format, long)} elements into the array (0 unless arrays are
 * placed on cache lines: {@link CacheLines}), so that every panel starts a cache line when they can.
 *
 * <p>Instances are immutable (the array is never exposed nor written after construction) and can
 * be shared freely between threads.
 */
public final class PackedMatrix {
    /** How the packed elements are stored. */
    public enum Format {
        /** float32, 4 bytes per element. */
        F32,
        /** IEEE binary16, 2 bytes per element. */
        F16,
        /** bfloat16, 2 bytes per element. */
        BF16
    }

    /** The packed floats, or null when the elements are 16-bit. */
    private final float[] data;
    /** The packed 16-bit elements, or null when they are float32. */
    private final short[] half;
    private final Format format;
    private final int rows;
    private final int cols;
    private final int kc;
    private final int paddedCols;
    /** Column of the packed layout where this matrix's column 0 lies (0 unless a column view). */
    private final int firstColumn;
    /** Index of the first element of the packed layout: {@link #pad(Format, long)}. */
    private final int start;

    /**
     * Zeroed panels of {@code format} for a {@code rows x cols} matrix packed with depth
     * {@code kc}, in an array {@link #pad(Format, long)} elements longer than {@link #packedSize}
     * (which the caller has checked against the array size limit), to be filled at
     * {@link #blockOffset} through {@link #data()} or {@link #half()}.
     */
    static PackedMatrix allocate(Format format, int rows, int cols, int kc) {
        long size = packedSize(rows, cols);
        int length = (int) (size + pad(format, size));
        int paddedCols = (int) Math.min(Integer.MAX_VALUE, paddedCols(cols));
        return format == Format.F32 ? new PackedMatrix(new float[length], null, format, rows, cols, kc, paddedCols, 0)
                : new PackedMatrix(null, new short[length], format, rows, cols, kc, paddedCols, 0);
    }

    private PackedMatrix(float[] data, short[] half, Format format, int rows, int cols, int kc, int paddedCols,
                         int firstColumn) {
        this.data = data;
        this.half = half;
        this.format = format;
        this.rows = rows;
        this.cols = cols;
        this.kc = kc;
        this.paddedCols = paddedCols;
        this.firstColumn = firstColumn;
        this.start = pad(format, (long) rows * paddedCols);
    }

    /** Width of the packed panels: a {@linkplain #columns column view} starts at a multiple of it. */
    public static int panelWidth() {
        return Kernels.NR;
    }

    /**
     * Columns {@code [from, to)} as a {@code rows() x (to - from)} matrix that shares this one's
     * packed floats (no copy). When {@code to} is not a panel boundary, the view's last panel
     * also holds the columns after {@code to}; GEMM reads them but never writes them to C.
     *
     * @throws IllegalArgumentException unless {@code 0 <= from <= to <= cols()} and {@code from}
     *                                  is a multiple of {@link #panelWidth()}
     */
    public PackedMatrix columns(int from, int to) {
        if (from < 0 || from > to || to > cols) {
            throw new IllegalArgumentException("columns: expected 0 <= from <= to <= cols = " + cols + ", got ["
                    + from + ", " + to + ")");
        }
        if (from % Kernels.NR != 0) {
            throw new IllegalArgumentException("from: expected a multiple of the panel width " + Kernels.NR
                    + ", got " + from);
        }
        return new PackedMatrix(data, half, format, rows, to - from, kc, paddedCols, firstColumn + from);
    }

    /** Number of rows of the packed matrix (K, the reduction length). */
    public int rows() {
        return rows;
    }

    /** Number of columns of the packed matrix (N). */
    public int cols() {
        return cols;
    }

    /** How the elements are stored. */
    public Format format() {
        return format;
    }

    /** Depth of the K blocks the matrix was packed with. */
    int kc() {
        return kc;
    }

    /** Number of floats the packed layout needs for a {@code rows x cols} matrix. */
    static long packedSize(int rows, int cols) {
        return (long) rows * paddedCols(cols);
    }

    /**
     * Elements before the packed layout of {@code size} elements ({@link #packedSize}) in an array
     * of {@code format} ({@link CacheLines#pad(int, long)}): arrays are allocated this much longer.
     */
    static int pad(Format format, long size) {
        return CacheLines.pad(format == Format.F32 ? Float.BYTES : Short.BYTES, size);
    }

    private static long paddedCols(int cols) {
        return ((long) cols + Kernels.NR - 1) / Kernels.NR * Kernels.NR;
    }

    /**
     * Index of the first float of the packed block of rows {@code [pc, pc + blockDepth)} and
     * columns starting at {@code jc} (a multiple of NR).
     */
    int blockOffset(int pc, int blockDepth, int jc) {
        return start + pc * paddedCols + (firstColumn + jc) * blockDepth;
    }

    /** The packed floats, null for 16-bit panels; package-private, never written after construction. */
    float[] data() {
        return data;
    }

    /** The packed 16-bit elements, null for float32 panels; package-private, never written after construction. */
    short[] half() {
        return half;
    }

    /**
     * Widens the {@code n} 16-bit elements from index {@code from} of the packed layout to
     * float32 at {@code dst[dOff]} (exact; BF16 rows put back in column order); only for
     * F16 and BF16 panels, {@code from} and {@code n} multiples of {@link Kernels#NR}.
     */
    void widen(int from, float[] dst, int dOff, int n) {
        if (format == Format.F16) {
            HalfFloat.fromF16(half, from, dst, dOff, n);
        } else {
            Kernels.DECODE.halfRows(true, half, from, dst, dOff, n / Kernels.NR);
        }
    }

    @Override
    public String toString() {
        return "PackedMatrix[" + rows + " x " + cols + ", " + format + ", kc=" + kc
                + (firstColumn == 0 ? "" : ", from column " + firstColumn) + "]";
    }
}
