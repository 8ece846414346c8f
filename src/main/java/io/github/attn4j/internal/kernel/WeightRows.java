package io.github.attn4j.internal.kernel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * An {@code nn.Linear} weight {@code (rows = out, cols = in)}, row-major, as given by the caller:
 * a {@code float[]}, or a {@link MemorySegment} of little-endian float32, F16 or BF16 values (the
 * byte layout of a safetensors or GGUF tensor). {@link Gemm#packWeights} reads it a run of one row
 * at a time, widening each element exactly to float32, so no float32 copy of a 16-bit weight is
 * ever made beyond one run. The source is read, never retained by what is packed from it.
 *
 * <p>The name (such as {@code "wq"}) is the one an error about the weight's values gives.
 * Sizes are the caller's contract (checked by the public entry points).
 */
public final class WeightRows {
    private static final ValueLayout.OfShort SHORT_LE =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT_LE =
            ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final String name;
    private final int rows;
    private final int cols;
    private final float[] array;
    private final MemorySegment segment;
    private final PackedMatrix.Format format;

    private WeightRows(String name, int rows, int cols, float[] array, MemorySegment segment,
                       PackedMatrix.Format format) {
        this.name = Objects.requireNonNull(name, "name");
        this.rows = rows;
        this.cols = cols;
        this.array = array;
        this.segment = segment;
        this.format = format;
    }

    /**
     * A weight in a float array of {@code rows * cols} elements.
     *
     * @param name the weight's name in error messages
     * @param w    the elements, row-major
     * @param rows output features
     * @param cols input features
     * @return the weight
     */
    public static WeightRows of(String name, float[] w, int rows, int cols) {
        return new WeightRows(name, rows, cols, Objects.requireNonNull(w, name), null, PackedMatrix.Format.F32);
    }

    /**
     * A weight in a segment of {@code rows * cols} little-endian values of {@code format}
     * (4 bytes each for F32, 2 for F16 and BF16), with any alignment.
     *
     * @param name    the weight's name in error messages
     * @param segment the elements, row-major
     * @param format  how each element is stored
     * @param rows    output features
     * @param cols    input features
     * @return the weight
     */
    public static WeightRows of(String name, MemorySegment segment, PackedMatrix.Format format, int rows, int cols) {
        return new WeightRows(name, rows, cols, null, Objects.requireNonNull(segment, name), format);
    }

    /** Output features. */
    public int rows() {
        return rows;
    }

    /** Input features. */
    public int cols() {
        return cols;
    }

    /** The weight's name in error messages. */
    String name() {
        return name;
    }

    /**
     * Elements {@code [col, col + n)} of row {@code row}, widened to float32, into
     * {@code dst[0, n)}; {@code scratch} holds at least {@code n} shorts (used for 16-bit segments).
     */
    void read(int row, int col, int n, float[] dst, short[] scratch) {
        long at = (long) row * cols + col;
        if (array != null) {
            System.arraycopy(array, (int) at, dst, 0, n);
        } else if (format == PackedMatrix.Format.F32) {
            MemorySegment.copy(segment, FLOAT_LE, 4 * at, dst, 0, n);
        } else {
            MemorySegment.copy(segment, SHORT_LE, 2 * at, scratch, 0, n);
            boolean bf16 = format == PackedMatrix.Format.BF16;
            for (int i = 0; i < n; i++) {
                dst[i] = bf16 ? HalfFloat.fromBf16(scratch[i]) : HalfFloat.fromF16(scratch[i]);
            }
        }
    }
}
