package io.github.attn4j.internal.kernel;

import io.github.attn4j.RandomTensors;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.quicktheories.QuickTheory.qt;

/**
 * GEMM with weights packed by {@link Gemm#packWeights}: for every format, the product has the bits
 * of the product with the float32 packing ({@link Gemm#pack}) of the rounded values, for shapes
 * and block sizes that cross the K blocks, the NC blocks and the NB column groups, with one A
 * micro-panel (panels widened one at a time) and several (column groups widened once), on one
 * thread and several. The rounded values come from {@link Float#floatToFloat16} for F16 and from
 * {@link HalfFloat#toBf16} (checked against the bit definition in {@link HalfFloatTest}) for BF16.
 */
class PackedWeightsTest {
    private static final int NR = Kernels.NR;
    private static final PackedMatrix.Format[] FORMATS = PackedMatrix.Format.values();

    private static float rounded(float x, PackedMatrix.Format format) {
        return switch (format) {
            case F32 -> x;
            case F16 -> Float.float16ToFloat(Float.floatToFloat16(x));
            case BF16 -> HalfFloat.fromBf16(HalfFloat.toBf16(x));
        };
    }

    @Test
    void productsEqualTheFloat32ProductOnTheRoundedWeights() {
        Gen<Integer> rows = Generate.pick(java.util.List.of(1, 2, 3, 4, 5, 6, 7, 13, 40, 100));
        Gen<Integer> dims = Generate.pick(java.util.List.of(1, 7, 16, 17, 33, 64, 100, 513, 700, 800));
        qt().withExamples(150).forAll(rows, dims, dims, Generate.longRange(0, Long.MAX_VALUE)).checkAssert((m, n, k, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            float[] w = RandomTensors.uniformArray(random, n * k, 4);
            MatrixView a = MatrixView.rowMajor(RandomTensors.uniformArray(random, m * k), m, k);
            Blocking small = new Blocking(Blocking.DEFAULT.kc(), Kernels.MR * (1 + random.nextInt(3)),
                    NR * (1 + random.nextInt(4)), NR * (1 + random.nextInt(2)), Integer.MAX_VALUE);
            for (PackedMatrix.Format format : FORMATS) {
                float[] r = new float[w.length];
                for (int i = 0; i < w.length; i++) {
                    r[i] = rounded(w[i], format);
                }
                PackedMatrix expectedB = Gemm.pack(MatrixView.rowMajor(r, n, k).transpose());
                PackedMatrix packed = Gemm.packWeights(format, new WeightRows[]{WeightRows.of("w", w, n, k)});
                assertEquals(format, packed.format());
                String what = format + " m=" + m + " n=" + n + " k=" + k;
                for (Blocking blocking : new Blocking[]{Blocking.DEFAULT, small}) {
                    float[] expected = new float[m * n], actual = new float[m * n];
                    Gemm.multiply(a, expectedB, expected, 0, n, false, blocking);
                    Gemm.multiply(a, packed, actual, 0, n, false, blocking);
                    assertSameBits(expected, actual, what + " " + blocking);
                }
                float[] expected = new float[m * n];
                Gemm.multiply(a, expectedB, expected, 0, n, false, 1);
                for (int threads = 1; threads <= 3; threads++) {
                    float[] actual = new float[m * n];
                    Gemm.multiply(a, packed, actual, 0, n, false, threads);
                    assertSameBits(expected, actual, what + " threads " + threads);
                }
            }
        });
    }

    @Test
    void stackedWeightsAreColumnViewsOfOnePackedMatrix() {
        int k = 530, m = 9;
        SplittableRandom random = new SplittableRandom(4);
        float[] w0 = RandomTensors.uniformArray(random, 2 * NR * k), w1 = RandomTensors.uniformArray(random, 5 * k);
        MatrixView a = MatrixView.rowMajor(RandomTensors.uniformArray(random, m * k), m, k);
        for (PackedMatrix.Format format : FORMATS) {
            PackedMatrix both = Gemm.packWeights(format, new WeightRows[]{WeightRows.of("w0", w0, 2 * NR, k),
                WeightRows.of("w1", w1, 5, k)});
            float[][] parts = {w0, w1};
            int[] from = {0, 2 * NR}, to = {2 * NR, 2 * NR + 5};
            for (int part = 0; part < 2; part++) {
                int n = to[part] - from[part];
                PackedMatrix alone = Gemm.packWeights(format, new WeightRows[]{WeightRows.of("w", parts[part], n, k)});
                float[] expected = new float[m * n], actual = new float[m * n];
                Gemm.multiply(a, alone, expected, 0, n, false);
                Gemm.multiply(a, both.columns(from[part], to[part]), actual, 0, n, false);
                assertSameBits(expected, actual, format + " part " + part);
            }
        }
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(actual[i])) {
                fail(what + " [" + i + "]: expected " + expected[i] + ", got " + actual[i]);
            }
        }
    }
}
