package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The 16-bit formats of narrow caches: decoding exhaustively over all 65536 bit patterns on the
 * active kernel path and the scalar form, encoding on random and edge floats against
 * {@link Float#floatToFloat16} and the bit definition of bfloat16 (round to nearest, ties to
 * even, written here independently on doubles).
 */
class HalfFloatTest {
    private static final DecodeOps SCALAR = new ScalarDecodeOps();

    private static short[] allPatterns() {
        short[] all = new short[65536];
        for (int i = 0; i < all.length; i++) {
            all[i] = (short) i;
        }
        return all;
    }

    /**
     * The row conversion of F16 weights ({@link HalfFloat#fromF16(short[], int, float[], int, int)},
     * the processor's conversion once C2 compiles it) gives {@link HalfFloat#fromF16}'s bits for
     * every pattern {@link HalfFloat#toF16} can store, that is all but the signalling NaNs (exponent
     * all ones, quiet bit 0x200 clear, significand not 0), which it may quiet: those must stay NaNs
     * of the same sign and payload.
     */
    @Test
    void f16RowsConvertEveryStorablePatternAsTheOneValueForm() {
        short[] all = allPatterns();
        float[] row = new float[all.length + 5];
        // Repeated so that the loop also runs compiled by C2, where it becomes vcvtph2ps; odd
        // offsets and lengths leave the vector loop a scalar rest.
        for (int round = 0; round < 200; round++) {
            int n = all.length - round % 7;
            HalfFloat.fromF16(all, 0, row, 5, n);
            for (int i = 0; i < n; i++) {
                int expected = Float.floatToRawIntBits(HalfFloat.fromF16(all[i]));
                int bits = Float.floatToRawIntBits(row[5 + i]);
                boolean signalling = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0 && (i & 0x200) == 0;
                if (signalling ? (bits | 0x400000) != (expected | 0x400000) : bits != expected) {
                    fail("F16 0x" + Integer.toHexString(i) + " round " + round + ": expected 0x"
                            + Integer.toHexString(expected) + ", got 0x" + Integer.toHexString(bits));
                }
            }
        }
        for (int i = 0; i < all.length; i++) {
            short stored = HalfFloat.toF16(HalfFloat.fromF16(all[i]));
            boolean nan = (stored & 0x7c00) == 0x7c00 && (stored & 0x3ff) != 0;
            assertTrue(!nan || (stored & 0x200) != 0, "toF16 stores a signalling NaN for 0x" + Integer.toHexString(i));
        }
    }

    @Test
    void f16DecodesEveryPatternAsFloatFloat16ToFloat() {
        short[] all = allPatterns();
        float[] active = new float[all.length + 3];
        float[] scalar = new float[all.length + 3];
        int rows = all.length / Kernels.NR;
        SCALAR.halfRows(false, all, 0, scalar, 3, rows);
        // Repeated so that the loop also runs compiled by C2, where the Vector API is intrinsified.
        for (int round = 0; round < 200; round++) {
            Kernels.DECODE.halfRows(false, all, 0, active, 3, rows);
            assertSameBits(scalar, active, round);
        }
        for (int i = 0; i < all.length; i++) {
            // Element i is column j of its panel row, stored at index `pattern` ({@link Packing#halfSlot}).
            int j = i % Kernels.NR, half = Kernels.NR / 2;
            int pattern = i - j + (j < half ? 2 * j : 2 * (j - half) + 1);
            float expected = Float.float16ToFloat((short) pattern);
            int bits = Float.floatToRawIntBits(active[i + 3]);
            String what = "F16 0x" + Integer.toHexString(pattern);
            assertEquals(Float.floatToRawIntBits(HalfFloat.fromF16((short) pattern)), bits, what + ": lane vs one-value form");
            assertEquals(bits, Float.floatToRawIntBits(scalar[i + 3]), what + ": active path vs scalar loop");
            if (Float.isNaN(expected)) {
                // A NaN keeps its sign and significand bits: sign | all-ones exponent | significand << 13.
                assertEquals((pattern & 0x8000) << 16 | 0x7f800000 | (pattern & 0x3ff) << 13, bits, what);
            } else {
                assertEquals(Float.floatToRawIntBits(expected), bits, what);
            }
        }
    }

    @Test
    void bf16DecodesEveryPatternAsTheUpperHalfOfAFloat() {
        short[] all = allPatterns();
        float[] active = new float[all.length];
        float[] scalar = new float[all.length];
        int rows = all.length / Kernels.NR;
        SCALAR.halfRows(true, all, 0, scalar, 0, rows);
        for (int round = 0; round < 200; round++) {
            Kernels.DECODE.halfRows(true, all, 0, active, 0, rows);
            assertSameBits(scalar, active, round);
        }
        for (int i = 0; i < all.length; i++) {
            // Element i is column j of its panel row, stored at index `pattern` ({@link Packing#halfSlot}).
            int j = i % Kernels.NR, half = Kernels.NR / 2;
            int pattern = i - j + (j < half ? 2 * j : 2 * (j - half) + 1);
            assertEquals(pattern << 16, Float.floatToRawIntBits(active[i]), "BF16 0x" + Integer.toHexString(pattern));
            assertEquals(pattern << 16, Float.floatToRawIntBits(scalar[i]), "BF16 0x" + Integer.toHexString(pattern) + " scalar");
        }
    }

    private static void assertSameBits(float[] expected, float[] actual, int round) {
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(actual[i])) {
                fail("round " + round + ", element " + i + ": scalar 0x" + Integer.toHexString(Float.floatToRawIntBits(expected[i]))
                        + ", active path 0x" + Integer.toHexString(Float.floatToRawIntBits(actual[i])));
            }
        }
    }

    /** Random floats of every magnitude (uniform bit patterns), Gaussians, and the edge cases of both formats. */
    private static List<Float> inputs() {
        List<Float> x = new ArrayList<>();
        float[] edges = {0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, Float.intBitsToFloat(0xffc00001), Float.intBitsToFloat(0x7f800001),
            1f, -1f, 0x1p-24f, 0x1p-25f, Math.nextUp(0x1p-25f), 3 * 0x1p-25f, 5 * 0x1p-25f, 0x1p-14f, Math.nextDown(0x1p-14f),
            1 + 0x1p-11f, 1 + 3 * 0x1p-11f, Math.nextUp(1 + 0x1p-11f), 2049f, 2051f, 65504f, 65519.996f, -65519.996f, 65520f,
            -65520f, 65536f, 1e6f, 1 + 0x1p-8f, 1 + 3 * 0x1p-8f, Math.nextDown(1 + 0x1p-8f), 257f, 259f, 0x1p-133f, 0x1p-134f,
            Float.intBitsToFloat(0x7f7f7fff), Float.intBitsToFloat(0x7f7f8000), Float.intBitsToFloat(0xff7f8000),
            Float.intBitsToFloat(0x00008000), Float.intBitsToFloat(0x00018000), Float.intBitsToFloat(0x007f8000)};
        for (float e : edges) {
            x.add(e);
        }
        SplittableRandom random = new SplittableRandom(16);
        for (int i = 0; i < 200_000; i++) {
            x.add(Float.intBitsToFloat(random.nextInt()));
            x.add((float) (random.nextGaussian() * Math.pow(2, random.nextInt(-30, 20))));
        }
        return x;
    }

    @Test
    void f16EncodesAsFloatToFloat16RoundingToTheNearestEven() {
        for (float x : inputs()) {
            String what = "x = " + x + " (0x" + Integer.toHexString(Float.floatToRawIntBits(x)) + ")";
            short expected = Float.floatToFloat16(x);
            assertEquals(Float.isFinite(x) && Float.isInfinite(Float.float16ToFloat(expected)), HalfFloat.overflowsF16(x), what);
            if (HalfFloat.overflowsF16(x)) {
                continue;
            }
            short h = HalfFloat.toF16(x);
            if (Float.isNaN(x)) {
                assertEquals((Float.floatToRawIntBits(x) >>> 16 & 0x8000) | 0x7e00, h & 0xffff, what);
                continue;
            }
            assertEquals(expected, h, what);
            if (Float.isFinite(x)) {
                assertNearestEven(x, h, 0x7c00, Float::float16ToFloat, what);
            }
        }
    }

    @Test
    void bf16EncodesByRoundingToTheNearestEven() {
        for (float x : inputs()) {
            String what = "x = " + x + " (0x" + Integer.toHexString(Float.floatToRawIntBits(x)) + ")";
            short h = HalfFloat.toBf16(x);
            int bits = Float.floatToRawIntBits(x);
            if (Float.isNaN(x)) {
                assertTrue(Float.isNaN(HalfFloat.fromBf16(h)), what);
                assertEquals(bits >>> 31, (h & 0xffff) >>> 15, what + ": sign");
                continue;
            }
            assertEquals(Float.isFinite(x) && Float.isInfinite(HalfFloat.fromBf16(h)), HalfFloat.overflowsBf16(x), what);
            if (!Float.isFinite(x)) {
                assertEquals(bits >>> 16, h & 0xffff, what);
            } else if (!HalfFloat.overflowsBf16(x)) {
                assertNearestEven(x, h, 0x7f80, HalfFloatTest::bf16Value, what);
            }
        }
    }

    @Test
    void rowEncodersGiveTheOneValueFormsBits() {
        List<Float> in = inputs();
        float[] x = new float[in.size() + 3];
        for (int i = 0; i < in.size(); i++) {
            x[i + 3] = in.get(i);
        }
        for (boolean bf16 : new boolean[]{false, true}) {
            String format = bf16 ? "BF16" : "F16";
            short[] scalar = new short[in.size()];
            short[] active = new short[in.size() + 5];
            SCALAR.toHalf(bf16, x, 3, in.size(), scalar, 0);
            // Repeated so that the loop also runs compiled by C2, where the Vector API is intrinsified.
            for (int round = 0; round < 40; round++) {
                Kernels.DECODE.toHalf(bf16, x, 3, in.size(), active, 5);
                for (int i = 0; i < in.size(); i++) {
                    float v = x[i + 3];
                    short expected = bf16 ? HalfFloat.toBf16(v) : HalfFloat.toF16(v);
                    if (active[i + 5] != expected || scalar[i] != expected) {
                        fail(format + " round " + round + ", x = " + v + " (0x" + Integer.toHexString(Float.floatToRawIntBits(v))
                                + "): one-value form 0x" + Integer.toHexString(expected & 0xffff) + ", active path 0x"
                                + Integer.toHexString(active[i + 5] & 0xffff) + ", scalar loop 0x" + Integer.toHexString(scalar[i] & 0xffff));
                    }
                }
            }
        }
    }

    @Test
    void rowOverflowChecksFindEveryOverflowingValueAndNothingElse() {
        // Gaussians of every scale below the F16 range, then one value at a time replaced by the
        // smallest magnitudes that overflow, the largest that do not, infinities and NaN.
        SplittableRandom random = new SplittableRandom(17);
        float[] x = new float[77];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (random.nextGaussian() * Math.pow(2, random.nextInt(-30, 14)));
        }
        float bf16Lowest = Float.intBitsToFloat(HalfFloat.BF16_OVERFLOW_BITS);
        float[] planted = {65520f, -65520f, Math.nextDown(65520f), Float.MAX_VALUE, bf16Lowest, -Math.nextDown(bf16Lowest),
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
        for (int round = 0; round < 40; round++) {
            for (boolean bf16 : new boolean[]{false, true}) {
                for (int from = 0; from < 3; from++) {
                    int n = x.length - from - round % 5;
                    assertEquals(false, Kernels.DECODE.anyHalfOverflow(bf16, x, from, n), "no overflow, from " + from);
                    for (int at = from; at < from + n; at += 1 + round % 3) {
                        float kept = x[at];
                        for (float p : planted) {
                            x[at] = p;
                            boolean expected = bf16 ? HalfFloat.overflowsBf16(p) : HalfFloat.overflowsF16(p);
                            String what = (bf16 ? "BF16" : "F16") + ": " + p + " at " + at + " of [" + from + ", " + (from + n) + ")";
                            assertEquals(expected, Kernels.DECODE.anyHalfOverflow(bf16, x, from, n), what);
                            assertEquals(expected, SCALAR.anyHalfOverflow(bf16, x, from, n), what + ", scalar");
                        }
                        x[at] = kept;
                    }
                }
            }
        }
    }

    private static float bf16Value(short h) {
        return Float.intBitsToFloat((h & 0xffff) << 16);
    }

    /**
     * {@code h} is the finite 16-bit value nearest x, the one with an even last bit on a tie: no
     * neighbour of the same sign ({@code h ± 1} in magnitude) is nearer, computed in double.
     */
    private static void assertNearestEven(float x, short h, int infinity, java.util.function.Function<Short, Float> value, String what) {
        int magnitude = h & 0x7fff;
        if (magnitude >= infinity) {
            fail(what + ": finite input rounded to 0x" + Integer.toHexString(h & 0xffff));
        }
        double err = Math.abs((double) x - value.apply(h));
        int sign = h & 0x8000;
        for (int neighbour : new int[]{magnitude - 1, magnitude + 1}) {
            if (neighbour < 0 || neighbour >= infinity) {
                continue;
            }
            double other = Math.abs((double) x - value.apply((short) (sign | neighbour)));
            if (other < err || other == err && (magnitude & 1) != 0) {
                fail(what + ": rounded to 0x" + Integer.toHexString(h & 0xffff) + " = " + value.apply(h) + ", but 0x"
                        + Integer.toHexString(sign | neighbour) + " = " + value.apply((short) (sign | neighbour)) + " is nearer or even");
            }
        }
        if (x != 0 && magnitude == 0) {
            // Rounded to zero: the sign is the input's.
            assertEquals(Float.floatToRawIntBits(x) >>> 31, sign >>> 15, what + ": sign of zero");
        }
    }
}
