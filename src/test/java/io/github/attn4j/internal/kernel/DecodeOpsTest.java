package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.Kernels.NR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * The active path's decode loops ({@link Kernels#DECODE}: a vector width, or scalar when the
 * suite runs with {@code attn4j.kernels=scalar}) give the same bits as the scalar loops, and as
 * the definition {@code q · s} of INT8, at any offset and length (vector tails included).
 */
class DecodeOpsTest {
    private static final DecodeOps SCALAR = new ScalarDecodeOps();
    /** Scales with the special cases: zero, subnormal, huge, infinite, NaN. */
    private static final float[] SPECIAL_SCALES = {0f, -0f, Float.MIN_VALUE, 1e-40f, Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NaN};

    private static float scale(SplittableRandom random) {
        return random.nextInt(8) == 0 ? SPECIAL_SCALES[random.nextInt(SPECIAL_SCALES.length)]
                : (float) (random.nextDouble(1e-3, 1) * Math.pow(2, random.nextInt(-20, 20)));
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]), what + "[" + i + "]");
        }
    }

    @Test
    void sixteenBitRowsPutEachRowBackInColumnOrder() {
        qt().withExamples(200).forAll(integers().between(0, 12), integers().between(0, 17), longs().all()).checkAssert((rows, off, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            short[] src = new short[off + rows * NR];
            for (int i = 0; i < src.length; i++) {
                src[i] = (short) random.nextInt();
            }
            int dOff = random.nextInt(9);
            for (boolean bf16 : new boolean[]{false, true}) {
                float[] expected = new float[dOff + rows * NR], actual = new float[expected.length], scalar = new float[expected.length];
                for (int r = 0; r < rows; r++) {
                    for (int j = 0; j < NR; j++) {
                        // Column j < NR/2 is stored at 2j, column NR/2 + j at 2j + 1; BF16 is a float's upper half.
                        short h = src[off + r * NR + (j < NR / 2 ? 2 * j : 2 * (j - NR / 2) + 1)];
                        expected[dOff + r * NR + j] = bf16 ? Float.intBitsToFloat(h << 16) : HalfFloat.fromF16(h);
                    }
                }
                SCALAR.halfRows(bf16, src, off, scalar, dOff, rows);
                Kernels.DECODE.halfRows(bf16, src, off, actual, dOff, rows);
                String what = (bf16 ? "BF16" : "F16") + " halfRows, rows=" + rows;
                assertSameBits(expected, scalar, "scalar " + what);
                assertSameBits(expected, actual, what);
            }
        });
    }

    @Test
    void int8LoopsGiveEachByteTimesItsScale() {
        qt().withExamples(200).forAll(integers().between(0, 40), integers().between(0, 17), longs().all()).checkAssert((rows, off, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            byte[] src = new byte[off + rows * NR];
            random.nextBytes(src);
            float[] scales = new float[3 + rows * 3 + NR];
            for (int i = 0; i < scales.length; i++) {
                scales[i] = scale(random);
            }
            int dOff = random.nextInt(9);
            float[] expected = new float[dOff + rows * NR], actual = new float[dOff + rows * NR], scalar = new float[expected.length];
            for (int i = 0; i < rows * NR; i++) {
                expected[dOff + i] = (float) src[off + i] * scales[3 + i % NR];
            }
            SCALAR.int8Columns(src, off, scales, 3, scalar, dOff, rows);
            Kernels.DECODE.int8Columns(src, off, scales, 3, actual, dOff, rows);
            assertSameBits(expected, scalar, "int8Columns scalar, rows=" + rows);
            assertSameBits(expected, actual, "int8Columns, rows=" + rows);
            for (int i = 0; i < rows * NR; i++) {
                expected[dOff + i] = (float) src[off + i] * scales[2 + i / NR * 3];
            }
            SCALAR.int8Rows(src, off, scales, 2, 3, scalar, dOff, rows);
            Kernels.DECODE.int8Rows(src, off, scales, 2, 3, actual, dOff, rows);
            assertSameBits(expected, scalar, "int8Rows scalar, rows=" + rows);
            assertSameBits(expected, actual, "int8Rows, rows=" + rows);
        });
    }

    @Test
    void int8LoopsCoverEveryByte() {
        byte[] src = new byte[256];
        for (int i = 0; i < 256; i++) {
            src[i] = (byte) i;
        }
        float[] scales = new float[NR];
        java.util.Arrays.fill(scales, 0.5f);
        float[] out = new float[256];
        Kernels.DECODE.int8Columns(src, 0, scales, 0, out, 0, 256 / NR);
        for (int i = 0; i < 256; i++) {
            assertEquals((byte) i * 0.5f, out[i], "byte " + i);
        }
    }

    @Test
    void int8BlocksQuantizeToTheNearestStepOfTheirScale() {
        qt().withExamples(400).forAll(integers().between(0, 70), integers().between(0, 17), longs().all()).checkAssert((n, off, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            float[] x = new float[off + n];
            int kind = random.nextInt(6);
            // Ties: the largest magnitude 127 t and the others (k + 1/2) t, t a power of two, so
            // that s = t and every other quotient is exactly halfway between two integers.
            float t = (float) Math.pow(2, random.nextInt(-30, 30));
            for (int i = off; i < x.length; i++) {
                x[i] = kind == 0 ? (random.nextInt(-127, 127) + 0.5f) * t
                        : kind == 1 ? 0f
                        : (float) (random.nextGaussian() * Math.pow(2, random.nextInt(-40, 40)));
            }
            if (n > 0 && kind == 0) {
                x[off + random.nextInt(n)] = (random.nextBoolean() ? 127 : -127) * t;
            }
            if (n > 0 && kind == 2) {
                x[off + random.nextInt(n)] = new float[]{Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}[random.nextInt(3)];
            }
            byte[] active = new byte[off + n + 3], scalar = new byte[n];
            java.util.Arrays.fill(active, (byte) 99);
            float s = 0;
            for (int round = 0; round < 3; round++) {
                s = Kernels.DECODE.toInt8(x, off, n, active, off + 3);
            }
            float scalarScale = SCALAR.toInt8(x, off, n, scalar, 0);
            assertEquals(Float.floatToRawIntBits(scalarScale), Float.floatToRawIntBits(s), "scale");
            // The definition, computed here apart: s = max|x| / 127, NaN for a NaN or an infinity.
            double max = 0;
            boolean finite = true;
            for (int i = off; i < x.length; i++) {
                finite &= Float.isFinite(x[i]);
                max = Math.max(max, Math.abs(x[i]));
            }
            assertEquals(finite ? (float) max / 127f : Float.NaN, s, "scale of the block");
            for (int i = 0; i < n; i++) {
                int q = active[off + 3 + i];
                assertEquals(scalar[i], active[off + 3 + i], "byte " + i + " against the scalar loop");
                if (!(s > 0f)) {
                    assertEquals(0, q, "byte " + i + " of a block without a positive scale");
                    continue;
                }
                double quotient = (double) (x[off + i] / s);
                double err = Math.abs(quotient - q);
                boolean nearest = err < 0.5 || err == 0.5 && q % 2 == 0;
                assertEquals(true, Math.abs(q) <= 127 && (nearest || Math.abs(q) == 127 && Math.abs(quotient) > 127),
                        "byte " + i + ": " + q + " for x / s = " + quotient);
            }
            assertEquals(99, active[off + 2], "before the block");
        });
    }
}
