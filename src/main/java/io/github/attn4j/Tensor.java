package io.github.attn4j;

import java.util.Arrays;

/**
 * A dense, row-major float32 tensor: a shape over a {@code float[]}.
 *
 * <p>{@link #of(float[], int...)} wraps the caller's array without copying, so later writes to
 * that array are visible through the tensor. Results computed by attn4j are fresh tensors that
 * nobody else holds. Element counts are limited to {@link Integer#MAX_VALUE}; larger shapes are
 * rejected with an {@link IllegalArgumentException} before anything is allocated.
 */
public final class Tensor {
    private final float[] data;
    private final int[] shape;

    private Tensor(float[] data, int[] shape) {
        this.data = data;
        this.shape = shape;
    }

    /**
     * Wraps {@code data} (no copy) as a tensor of the given shape.
     *
     * @throws NullPointerException     if {@code data} or {@code shape} is null
     * @throws IllegalArgumentException if the shape is empty, has a negative dim, or its element
     *                                  count differs from {@code data.length}
     */
    public static Tensor of(float[] data, int... shape) {
        Checks.notNull(data, "data");
        int[] s = validShape(shape);
        long count = count(s);
        Checks.check(count == data.length, "data", "length " + count + " for shape " + Arrays.toString(s),
                "length " + data.length);
        return new Tensor(data, s);
    }

    /** A new tensor of zeros. */
    public static Tensor zeros(int... shape) {
        int[] s = validShape(shape);
        return new Tensor(new float[Checks.elementCount("shape", toLongs(s))], s);
    }

    /** A copy of the shape. */
    public int[] shape() {
        return shape.clone();
    }

    /** Number of dimensions. */
    public int rank() {
        return shape.length;
    }

    /** Size of dimension {@code axis}; negative axes count from the end, as in PyTorch. */
    public int dim(int axis) {
        int a = axis < 0 ? axis + shape.length : axis;
        Checks.check(a >= 0 && a < shape.length, "axis", "a value in [" + -shape.length + ", " + shape.length + ")", axis);
        return shape[a];
    }

    /** Number of elements. */
    public int size() {
        return data.length;
    }

    /** The element at a full index (one coordinate per dimension). */
    public float get(int... index) {
        Checks.notNull(index, "index");
        Checks.check(index.length == shape.length, "index", shape.length + " coordinates for shape "
                + Arrays.toString(shape), index.length + " coordinates " + Arrays.toString(index));
        int flat = 0;
        for (int i = 0; i < shape.length; i++) {
            if (index[i] < 0 || index[i] >= shape[i]) {
                throw new IllegalArgumentException("index: expected coordinate " + i + " in [0, " + shape[i]
                        + ") for shape " + Arrays.toString(shape) + ", got " + Arrays.toString(index));
            }
            flat = flat * shape[i] + index[i];
        }
        return data[flat];
    }

    /** A row-major copy of the elements. */
    public float[] toArray() {
        return data.clone();
    }

    /** A tensor over the same data with another shape of the same element count (no copy). */
    public Tensor reshape(int... newShape) {
        int[] s = validShape(newShape);
        Checks.check(count(s) == data.length, "newShape", "element count " + data.length + " (shape "
                + Arrays.toString(shape) + ")", Arrays.toString(s) + " with " + count(s) + " elements");
        return new Tensor(data, s);
    }

    /** The backing array, for kernels inside the library. Not copied. */
    float[] data() {
        return data;
    }

    @Override
    public String toString() {
        return "Tensor" + Arrays.toString(shape);
    }

    private static int[] validShape(int[] shape) {
        Checks.notNull(shape, "shape");
        Checks.check(shape.length > 0, "shape", "at least one dimension", "[]");
        for (int d : shape) {
            Checks.check(d >= 0, "shape", "non-negative dimensions", Arrays.toString(shape));
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
