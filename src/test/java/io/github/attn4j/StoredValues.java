package io.github.attn4j;

/**
 * What each {@link Precision} stores, written from the formats' definitions for the tests (not
 * through attn4j's encoders): F16 by {@link Float#floatToFloat16}, BF16 by its bit definition
 * (keep the upper 16 bits, round the lower 16 to nearest, ties to even), INT8 by its block
 * definition ({@code s = max|x| / 127} per 32 values of a vector, {@code q = rint(x / s)}).
 */
public final class StoredValues {
    /** Values per INT8 scale. */
    public static final int INT8_BLOCK = 32;

    private StoredValues() {
    }

    /** The float value {@code x} reads back as. */
    public static float f16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    /** The float value {@code x} reads back as from BF16 (NaN stays NaN). */
    public static float bf16(float x) {
        if (Float.isNaN(x)) {
            return Float.NaN;
        }
        int bits = Float.floatToRawIntBits(x);
        int upper = bits >>> 16;
        int lower = bits & 0xffff;
        if (lower > 0x8000 || lower == 0x8000 && (upper & 1) == 1) {
            upper++;
        }
        return Float.intBitsToFloat(upper << 16);
    }

    /**
     * What vectors of {@code width} values (rows of {@code x}, one after another) read back as
     * from {@code precision}; INT8 blocks of 32 start at each vector's first value.
     */
    public static float[] of(Precision precision, float[] x, int width) {
        return of(precision, x, width, INT8_BLOCK);
    }

    /** Like {@link #of(Precision, float[], int)}, with INT8 blocks of {@code block} values. */
    public static float[] of(Precision precision, float[] x, int width, int block) {
        float[] out = x.clone();
        for (int row = 0; row < x.length / width; row++) {
            for (int c0 = 0; c0 < width; c0 += block) {
                int from = row * width + c0;
                int to = row * width + Math.min(width, c0 + block);
                for (int i = from; i < to; i++) {
                    out[i] = switch (precision) {
                        case F32 -> x[i];
                        case F16 -> f16(x[i]);
                        case BF16 -> bf16(x[i]);
                        case INT8 -> int8(x, from, to, i);
                    };
                }
            }
        }
        return out;
    }

    /** Element i of the INT8 block {@code x[from, to)}: NaN throughout when the block holds NaN or an infinity. */
    private static float int8(float[] x, int from, int to, int i) {
        float max = 0f;
        for (int j = from; j < to; j++) {
            if (!Float.isFinite(x[j])) {
                return Float.NaN;
            }
            max = Math.max(max, Math.abs(x[j]));
        }
        float s = max / 127f;
        if (s == 0f) {
            return 0f;
        }
        long q = Math.round(Math.rint(x[i] / s));
        return Math.max(-127, Math.min(127, q)) * s;
    }
}
