package io.github.attn4j.internal.kernel;

import io.github.attn4j.RandomTensors;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.Kernels.MR;
import static io.github.attn4j.internal.kernel.Kernels.NR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * The {@link DecodeOps} products give, bit for bit, what the float32 micro-kernel
 * ({@link Kernels#MICRO}'s {@link MicroKernel#block}) gives on the same float32 panels or on
 * panels decoded by the scalar decode loops (INT8 keys: their definition), on the active path
 * and on the scalar one, for every edge of the block: any
 * depth, 1 to {@link DecodeOps#PRODUCT_ROWS} rows of a row-major A with any leading dimension
 * (the gap past each row and the rows past them hold NaN and must not reach C), a narrow last
 * panel, one or two rows over whole groups of panels and a rest (the one- and two-row loops
 * and the 4-row loop in one product), with and without
 * accumulation, values of A of every kind, F16 (panel rows in pairs, or in column order as
 * weights) and BF16 bits of every kind (NaN, infinities,
 * subnormals included) and INT8 scales of every kind.
 */
class DecodeProductsTest {
    private static final DecodeOps SCALAR = new ScalarDecodeOps();
    /** Values of A mixed into the ordinary ones: large, huge, subnormal, signed zero, infinities, NaN. */
    private static final float[] SPECIAL_A = {0x1p16f, -0x1p16f, 3e38f, Float.MIN_VALUE, -1e-40f, -0f,
            Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
    private static final float[] SPECIAL_SCALES = {0f, Float.MIN_VALUE, 1e-40f, Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NaN};

    /** One product's shape: depth, panels, rows, last panel width, whether C is added to, offsets and strides. */
    private record Shape(int kc, int panels, int mr, int lastNr, boolean accumulate, int aOff, int lda, int bOff, int bStride, int ldc) {
        static Shape of(SplittableRandom random, int kc, boolean accumulate) {
            // Under one or two rows, whole groups of full panels take the one- and two-row loops
            // (VectorDecodeRow, VectorDecodePair) and the rest the 4-row loop: 4 and 8 panels
            // made common, 5 to 9 for groups and a rest.
            int panels = random.nextInt(3) == 0 ? 4 * (1 + random.nextInt(2)) : 1 + random.nextInt(9);
            int mr = random.nextInt(3) == 0 ? 1 : 1 + random.nextInt(DecodeOps.PRODUCT_ROWS);
            int lastNr = random.nextBoolean() ? NR : 1 + random.nextInt(NR);
            return new Shape(kc, panels, mr, lastNr, accumulate,
                    random.nextInt(5), kc + random.nextInt(3), random.nextInt(9), kc * NR + random.nextInt(3) * NR,
                    panels * NR + random.nextInt(5));
        }

        /**
         * A row-major, rows lda apart; the gaps past kc, the rows past mr (up to MR of them) and the
         * rest NaN. In one example of three, up to three values of each row are {@link #SPECIAL_A} values.
         */
        float[] a(SplittableRandom random) {
            float[] a = new float[aOff + MR * lda + 3];
            Arrays.fill(a, Float.NaN);
            for (int i = 0; i < mr; i++) {
                for (int p = 0; p < kc; p++) {
                    a[aOff + i * lda + p] = RandomTensors.uniformValue(random);
                }
            }
            if (random.nextInt(3) == 0) {
                for (int i = 0; i < mr; i++) {
                    for (int k = random.nextInt(4); k > 0; k--) {
                        a[aOff + i * lda + random.nextInt(kc)] = SPECIAL_A[random.nextInt(SPECIAL_A.length)];
                    }
                }
            }
            return a;
        }

        float[] c(SplittableRandom random) {
            float[] c = new float[DecodeOps.PRODUCT_ROWS * ldc];
            for (int i = 0; i < c.length; i++) {
                c[i] = RandomTensors.uniformValue(random);
            }
            return c;
        }

        int bLength() {
            return bOff + (panels - 1) * bStride + kc * NR;
        }

        /** The float32 micro-kernel over panel {@code t}, decoded into {@code panel}. */
        void micro(float[] a, float[] panel, int t, float[] c, boolean lastNarrow) {
            Kernels.MICRO.block(kc, a, aOff, lda, panel, 0, c, t * NR, ldc, mr, lastNarrow && t == panels - 1 ? lastNr : NR, accumulate);
        }
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            assertEquals(Float.floatToIntBits(expected[i]), Float.floatToIntBits(actual[i]), what + " at " + i);
        }
    }

    @Test
    void floatProductEqualsTheMicroKernel() {
        float[] special = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0f, Float.MIN_VALUE};
        qt().withExamples(300).forAll(integers().between(1, 140), integers().between(0, 1), longs().all()).checkAssert((kc, mode, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            Shape shape = Shape.of(random, kc, mode == 1);
            float[] b = new float[shape.bLength()];
            for (int i = 0; i < b.length; i++) {
                b[i] = random.nextInt(50) == 0 ? special[random.nextInt(special.length)] : RandomTensors.uniformValue(random);
            }
            float[] a = shape.a(random);
            float[] expected = shape.c(random);
            float[] actual = expected.clone(), scalar = expected.clone();
            for (int t = 0; t < shape.panels(); t++) {
                float[] panel = Arrays.copyOfRange(b, shape.bOff() + t * shape.bStride(), shape.bOff() + t * shape.bStride() + kc * NR);
                shape.micro(a, panel, t, expected, true);
            }
            Kernels.DECODE.floatProduct(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    actual, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            SCALAR.floatProduct(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    scalar, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            assertSameBits(expected, actual, "float " + shape);
            assertSameBits(expected, scalar, "scalar float " + shape);
        });
    }

    @Test
    void halfProductsEqualTheMicroKernelOnDecodedPanels() {
        qt().withExamples(300).forAll(integers().between(1, 140), integers().between(0, 3), longs().all()).checkAssert((kc, mode, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            boolean bf16 = (mode & 1) == 1;
            // F16 panels the caller declares finite: raw bits of every finite kind, subnormals included.
            boolean finite = !bf16 && random.nextBoolean();
            Shape shape = Shape.of(random, kc, (mode & 2) == 2);
            short[] b = new short[shape.bLength()];
            for (int i = 0; i < b.length; i++) {
                // Mostly ordinary values, some raw bits (NaN, infinities, subnormals).
                float x = RandomTensors.uniformValue(random);
                b[i] = random.nextInt(20) == 0 ? (short) random.nextInt() : bf16 ? HalfFloat.toBf16(x) : HalfFloat.toF16(x);
                if (finite && (b[i] & HalfFloat.F16_EXP) == HalfFloat.F16_EXP) {
                    b[i] &= (short) ~0x4000;        // exponent 31 becomes 15
                }
            }
            float[] a = shape.a(random);
            float[] expected = shape.c(random);
            float[] actual = expected.clone(), scalar = expected.clone();
            float[] panel = new float[kc * NR];
            for (int t = 0; t < shape.panels(); t++) {
                int from = shape.bOff() + t * shape.bStride();
                SCALAR.halfRows(bf16, b, from, panel, 0, kc);
                shape.micro(a, panel, t, expected, true);
            }
            String what = (bf16 ? "bf16 " : finite ? "finite f16 " : "f16 ") + shape;
            Kernels.DECODE.halfProduct(bf16, finite, kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    actual, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            SCALAR.halfProduct(bf16, finite, kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    scalar, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            assertSameBits(expected, actual, what);
            assertSameBits(expected, scalar, "scalar " + what);
        });
    }

    /**
     * F16 weight panels, rows in column order: the micro-kernel over the panels widened value by
     * value ({@link HalfFloat#fromF16}), for one to four rows (one made common: the product of a
     * one-token decode step), depths that end inside a widened chunk ({@link VectorDecodeRow#F16_DEPTH}), raw
     * bits of every kind.
     */
    @Test
    void f16WeightProductEqualsTheMicroKernelOnWidenedPanels() {
        qt().withExamples(300).forAll(integers().between(1, 140), integers().between(0, 1), longs().all()).checkAssert((kc, mode, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            Shape any = Shape.of(random, kc, mode == 1);
            Shape shape = new Shape(kc, any.panels(), random.nextBoolean() ? 1 : 1 + random.nextInt(DecodeOps.PRODUCT_ROWS), any.lastNr(), any.accumulate(), any.aOff(),
                    any.lda(), any.bOff(), any.bStride(), any.ldc());
            short[] b = new short[shape.bLength()];
            for (int i = 0; i < b.length; i++) {
                b[i] = random.nextInt(20) == 0 ? (short) random.nextInt() : HalfFloat.toF16(RandomTensors.uniformValue(random));
            }
            float[] a = shape.a(random);
            float[] expected = shape.c(random);
            float[] actual = expected.clone(), scalar = expected.clone();
            float[] panel = new float[kc * NR];
            for (int t = 0; t < shape.panels(); t++) {
                for (int i = 0; i < kc * NR; i++) {
                    panel[i] = HalfFloat.fromF16(b[shape.bOff() + t * shape.bStride() + i]);
                }
                shape.micro(a, panel, t, expected, true);
            }
            Kernels.DECODE.f16WeightProduct(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    actual, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            SCALAR.f16WeightProduct(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(),
                    scalar, 0, shape.ldc(), shape.mr(), shape.lastNr(), shape.accumulate());
            assertSameBits(expected, actual, "f16 weights " + shape);
            assertSameBits(expected, scalar, "scalar f16 weights " + shape);
        });
    }

    private static float scale(SplittableRandom random) {
        return random.nextInt(10) == 0 ? SPECIAL_SCALES[random.nextInt(SPECIAL_SCALES.length)]
                : (float) (random.nextDouble(1e-3, 1) * Math.pow(2, random.nextInt(-20, 20)));
    }

    /**
     * INT8 values: the micro-kernel on panels decoded by the scalar loops. INT8 keys: their
     * definition ({@link DecodeOps#int8Keys}) evaluated here element by element, a chain over the
     * bytes per block of depths, each block's sum added as {@code fma(part, scale, total)}.
     */
    @Test
    void int8ProductsEqualTheirDefinitions() {
        qt().withExamples(300).forAll(integers().between(1, 140), integers().between(0, 2), longs().all()).checkAssert((kc, blockChoice, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            boolean keys = random.nextBoolean();
            Shape shape = Shape.of(random, kc, !keys);
            // A multiple of NR, or (one block per vector) at least a key's depth or a value's columns.
            int block = blockChoice == 0 ? Int8Panels.BLOCK : blockChoice == 1 ? NR
                    : (keys ? kc : shape.panels() * NR) + random.nextInt(3);
            byte[] b = new byte[shape.bLength()];
            random.nextBytes(b);
            int blocks = (kc + block - 1) / block;
            int sPanel = blocks * NR;
            int sRow = shape.panels() * NR / block + 1;
            float[] scales = new float[3 + shape.panels() * sPanel + kc * sRow + NR];
            for (int i = 0; i < scales.length; i++) {
                scales[i] = scale(random);
            }
            float[] a = shape.a(random);
            float[] expected = shape.c(random);
            float[] actual = expected.clone(), scalar = expected.clone();
            float[] panel = new float[kc * NR];
            int sOff = 3;
            // Keys: a scale per key (column) and block of depths; values: a scale per key (row) and block of columns.
            for (int t = 0; t < shape.panels(); t++) {
                int from = shape.bOff() + t * shape.bStride();
                if (keys) {
                    int nr = t == shape.panels() - 1 ? shape.lastNr() : NR;
                    for (int i = 0; i < shape.mr(); i++) {
                        for (int j = 0; j < nr; j++) {
                            float total = 0f;
                            for (int k = 0; k < blocks; k++) {
                                float part = 0f;
                                for (int p = k * block; p < Math.min(kc, (k + 1) * block); p++) {
                                    part = Math.fma(a[shape.aOff() + i * shape.lda() + p], (float) b[from + p * NR + j], part);
                                }
                                total = Math.fma(part, scales[sOff + t * sPanel + k * NR + j], total);
                            }
                            expected[i * shape.ldc() + t * NR + j] = total;
                        }
                    }
                } else {
                    SCALAR.int8Rows(b, from, scales, sOff + t * NR / block, sRow, panel, 0, kc);
                    shape.micro(a, panel, t, expected, false);
                }
            }
            String what = (keys ? "int8 keys " : "int8 values ") + "block " + block + " " + shape;
            if (keys) {
                Kernels.DECODE.int8Keys(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(), scales, sOff, sPanel,
                        block, actual, 0, shape.ldc(), shape.mr(), shape.lastNr());
                SCALAR.int8Keys(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(), scales, sOff, sPanel,
                        block, scalar, 0, shape.ldc(), shape.mr(), shape.lastNr());
            } else {
                Kernels.DECODE.int8Values(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(), scales, sOff, sRow,
                        block, actual, 0, shape.ldc(), shape.mr());
                SCALAR.int8Values(kc, a, shape.aOff(), shape.lda(), b, shape.bOff(), shape.bStride(), shape.panels(), scales, sOff, sRow,
                        block, scalar, 0, shape.ldc(), shape.mr());
            }
            assertSameBits(expected, actual, what);
            assertSameBits(expected, scalar, "scalar " + what);
        });
    }
}
