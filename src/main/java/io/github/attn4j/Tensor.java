package io.github.attn4j;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * A dense, row-major float32 tensor: a shape over a {@code float[]} or over a
 * {@link MemorySegment}.
 *
 * <p>{@link #of(float[], int...)} and {@link #of(MemorySegment, int...)} wrap the caller's storage
 * without copying, so later writes to it are visible through the tensor. Results computed by
 * attn4j are fresh array-backed tensors that nobody else holds.
 *
 * <p><b>Limits.</b> A tensor holds at most {@code Integer.MAX_VALUE - 8} elements (2147483639,
 * the largest {@code float[]} every JVM allocates), whatever its storage; larger shapes are
 * rejected with an {@link IllegalArgumentException} before anything is allocated. So are
 * operations whose intermediate buffers would pass that count.
 *
 * <p><b>Segments.</b> The GEMM and attention micro-kernels read their left operand in place from
 * {@code float[]}, so a tensor over a native or mapped segment is copied once into a heap array
 * when a computation reads it: one pass over its bytes, against {@code O(L·E²)} or
 * {@code O(L²·d)} arithmetic (see the README for the measured cost). A segment over a whole
 * {@code float[]} ({@code MemorySegment.ofArray(float[])}) is used without that copy.
 */
public final class Tensor {
    private final float[] data;
    private final MemorySegment segment;
    private final int size;
    private final int[] shape;

    private Tensor(float[] data, int[] shape) {
        this.data = data;
        this.segment = null;
        this.size = data.length;
        this.shape = shape;
    }

    private Tensor(MemorySegment segment, int size, int[] shape) {
        this.data = null;
        this.segment = segment;
        this.size = size;
        this.shape = shape;
    }

    /**
     * Wraps {@code segment} (no copy) as a tensor of the given shape: element {@code i} (row-major)
     * is the float in native byte order at byte offset {@code 4 * i}. Heap, native and mapped
     * segments are accepted, read-only ones too, with any alignment. The segment must stay alive
     * (its arena open) while the tensor is used.
     *
     * @param segment the floats, 4 bytes per element
     * @param shape   the dimensions
     * @return a tensor over {@code segment}
     * @throws NullPointerException     if {@code segment} or {@code shape} is null
     * @throws IllegalArgumentException if the shape is empty, has a negative dim, holds more than
     *                                  {@code Integer.MAX_VALUE - 8} elements, or the segment's
     *                                  size is not 4 bytes per element
     */
    public static Tensor of(MemorySegment segment, int... shape) {
        Checks.notNull(segment, "segment");
        int[] s = validShape(shape);
        long count = count(s);
        if (segment.byteSize() != 4 * count) {
            throw Checks.fail("segment", "byteSize " + 4 * count + " (4 bytes per element of shape "
                    + Arrays.toString(s) + ")", "byteSize " + segment.byteSize());
        }
        if (segment.heapBase().orElse(null) instanceof float[] array && array.length == count
                && segment.address() == 0) {
            return new Tensor(array, s);
        }
        return new Tensor(segment, (int) count, s);
    }

    /**
     * Wraps {@code data} (no copy) as a tensor of the given shape.
     *
     * @param data  the elements, row-major
     * @param shape the dimensions
     * @return a tensor over {@code data}
     * @throws NullPointerException     if {@code data} or {@code shape} is null
     * @throws IllegalArgumentException if the shape is empty, has a negative dim, or its element
     *                                  count differs from {@code data.length}
     */
    public static Tensor of(float[] data, int... shape) {
        Checks.notNull(data, "data");
        int[] s = validShape(shape);
        long count = count(s);
        if (count != data.length) {
            throw Checks.fail("data", "length " + count + " for shape " + Arrays.toString(s),
                    "length " + data.length);
        }
        return new Tensor(data, s);
    }

    /**
     * A new tensor of zeros.
     *
     * @param shape the dimensions
     * @return a new tensor of that shape
     */
    public static Tensor zeros(int... shape) {
        int[] s = validShape(shape);
        return new Tensor(new float[Checks.elementCount("shape", toLongs(s))], s);
    }

    /**
     * A copy of the shape.
     *
     * @return the dimensions, a copy
     */
    public int[] shape() {
        return shape.clone();
    }

    /**
     * Number of dimensions.
     *
     * @return the number of dimensions
     */
    public int rank() {
        return shape.length;
    }

    /**
     * Size of dimension {@code axis}; negative axes count from the end, as in PyTorch.
     *
     * @param axis dimension index, negative from the end
     * @return the size of that dimension
     */
    public int dim(int axis) {
        int a = axis < 0 ? axis + shape.length : axis;
        if (!(a >= 0 && a < shape.length)) {
            throw Checks.fail("axis", "a value in [" + -shape.length + ", " + shape.length + ")", axis);
        }
        return shape[a];
    }

    /**
     * Number of elements.
     *
     * @return the number of elements
     */
    public int size() {
        return size;
    }

    /**
     * The element at a full index (one coordinate per dimension).
     *
     * @param index one coordinate per dimension
     * @return the element
     */
    public float get(int... index) {
        Checks.notNull(index, "index");
        if (index.length != shape.length) {
            throw Checks.fail("index", shape.length + " coordinates for shape "
                    + Arrays.toString(shape), index.length + " coordinates " + Arrays.toString(index));
        }
        int flat = 0;
        for (int i = 0; i < shape.length; i++) {
            if (index[i] < 0 || index[i] >= shape[i]) {
                throw new IllegalArgumentException("index: expected coordinate " + i + " in [0, " + shape[i]
                        + ") for shape " + Arrays.toString(shape) + ", got " + Arrays.toString(index));
            }
            flat = flat * shape[i] + index[i];
        }
        return data != null ? data[flat] : segment.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, flat);
    }

    /**
     * A row-major copy of the elements.
     *
     * @return a new array of the elements in row-major order
     */
    public float[] toArray() {
        return data != null ? data.clone() : segment.toArray(ValueLayout.JAVA_FLOAT_UNALIGNED);
    }

    /**
     * A tensor over the same data with another shape of the same element count (no copy).
     *
     * @param newShape the new dimensions, same element count
     * @return a tensor sharing this tensor's data
     */
    public Tensor reshape(int... newShape) {
        int[] s = validShape(newShape);
        if (count(s) != size) {
            throw Checks.fail("newShape", "element count " + size + " (shape "
                    + Arrays.toString(shape) + ")", Arrays.toString(s) + " with " + count(s) + " elements");
        }
        return data != null ? new Tensor(data, s) : new Tensor(segment, size, s);
    }

    /**
     * The elements as an array, for kernels inside the library: the backing array itself (not
     * copied), or for a segment-backed tensor a fresh copy of the segment.
     */
    float[] data() {
        return data != null ? data : toArray();
    }

    /** The backing array itself, or null when the tensor is over a segment that is not a whole {@code float[]}. */
    float[] array() {
        return data;
    }

    /** True when the tensor is over a read-only segment, so that it cannot be written. */
    boolean isReadOnly() {
        return segment != null && segment.isReadOnly();
    }

    /**
     * Writes {@code src[0, size())} over the elements, row-major: one bulk copy into the array or
     * the segment, nothing allocated.
     */
    void copyFrom(float[] src) {
        if (data != null) {
            System.arraycopy(src, 0, data, 0, size);
        } else {
            MemorySegment.copy(src, 0, segment, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, size);
        }
    }

    /** True when both tensors are over the same {@code float[]} (identity), whatever their shapes. */
    boolean sharesArray(Tensor other) {
        return data != null && data == other.data;
    }

    @Override
    public String toString() {
        return "Tensor" + Arrays.toString(shape);
    }

    private static int[] validShape(int[] shape) {
        Checks.notNull(shape, "shape");
        Checks.check(shape.length > 0, "shape", "at least one dimension", "[]");
        for (int d : shape) {
            if (d < 0) {
                throw Checks.fail("shape", "non-negative dimensions", Arrays.toString(shape));
            }
        }
        int[] s = shape.clone();
        Checks.elementCount("shape", toLongs(s));
        return s;
    }

    private static long count(int[] shape) {
        long n = 1;
        for (int d : shape) {
            n *= d;
        }
        return n;
    }

    private static long[] toLongs(int[] shape) {
        long[] l = new long[shape.length];
        for (int i = 0; i < shape.length; i++) {
            l[i] = shape[i];
        }
        return l;
    }
}
