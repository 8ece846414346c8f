package io.github.attn4j.internal.kernel;

/**
 * Where the per-head rows of a (batch, token, head) activation live in a float array: element
 * {@code c} of token {@code t}, head {@code h}, batch {@code b} is
 * {@code data[offset + b * batchStride + t * rowStride + h * headStride + c]}, for
 * {@code c < width}.
 *
 * <p>The same record describes the {@code (B, H, L, d)} layout of
 * {@code scaled_dot_product_attention} inputs and the {@code (B, L, H * d)} layout that a
 * projection GEMM writes, so the attention kernel reads either without a split-heads copy.
 *
 * @throws IllegalArgumentException if a size or stride is negative or a reachable element lies
 *                                  outside {@code data}
 */
public record HeadLayout(float[] data, int offset, int batch, int length, int heads, int width,
                         int batchStride, int rowStride, int headStride) {

    public HeadLayout {
        if (data == null) {
            throw new NullPointerException("data must not be null");
        }
        if (offset < 0 || batch < 0 || length < 0 || heads < 0 || width < 0
                || batchStride < 0 || rowStride < 0 || headStride < 0) {
            throw new IllegalArgumentException("layout: expected non-negative offset, sizes and strides, got " + describe(
                    offset, batch, length, heads, width, batchStride, rowStride, headStride));
        }
        if ((long) batch * length * heads * width > 0) {
            long last = offset + (long) (batch - 1) * batchStride + (long) (length - 1) * rowStride
                    + (long) (heads - 1) * headStride + width;
            if (last > data.length) {
                throw new IllegalArgumentException("layout: expected at least " + last + " elements for " + describe(
                        offset, batch, length, heads, width, batchStride, rowStride, headStride) + ", got length " + data.length);
            }
        }
    }

    /** The layout of a dense {@code (B, H, L, width)} tensor at offset 0. */
    public static HeadLayout headsMajor(float[] data, int batch, int heads, int length, int width) {
        return new HeadLayout(data, 0, batch, length, heads, width,
                heads * length * width, width, length * width);
    }

    /**
     * The layout of heads side by side in rows of {@code rowStride} floats, {@code (B, L, ...)}:
     * head {@code h} starts at column {@code column + h * width}.
     */
    public static HeadLayout tokenMajor(float[] data, int column, int batch, int length, int heads, int width, int rowStride) {
        return new HeadLayout(data, column, batch, length, heads, width, length * rowStride, rowStride, width);
    }

    /** Offset of element 0 of token {@code t}, head {@code h}, batch {@code b}. */
    public int at(int b, int t, int h) {
        return offset + b * batchStride + t * rowStride + h * headStride;
    }

    private static String describe(int offset, int batch, int length, int heads, int width, int bs, int rs, int hs) {
        return "offset=" + offset + ", batch=" + batch + ", length=" + length + ", heads=" + heads + ", width=" + width
                + ", batchStride=" + bs + ", rowStride=" + rs + ", headStride=" + hs;
    }
}
