package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.github.attn4j.RandomTensors;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * {@link Gemm}'s column bias ({@code C = A * B + bias}), added to each tile after the product of
 * the first K block: the bits of copying the bias into every row of C and accumulating the
 * product into it (the accumulating product being checked against the double reference here and
 * in the other GEMM tests), within the float bound of the exact sum, on float32 and 16-bit
 * panels, over one K block and several, for the single-row loops of a decode step's few rows
 * and the micro-kernel's many, on one to three threads.
 */
class GemmBiasTest {
    private static final PackedMatrix.Format[] FORMATS = PackedMatrix.Format.values();

    @Test
    void biasGivesTheBitsOfBiasRowsAccumulatedOnEveryThreadCount() {
        int[][] nk = {{70, 45}, {300, 1600}};
        for (int[] shape : nk) {
            for (int m : new int[]{1, 2, 5, Kernels.MR + 8, 140}) {
                int n = shape[0], k = shape[1];
                GemmCase t = new GemmCase(m, n, k, false, true, 0, true, 31L * m + n);
                float[] bias = bias(n, new SplittableRandom(m));
                for (PackedMatrix.Format format : FORMATS) {
                    PackedMatrix packed = Gemm.packWeights(format, new WeightRows[]{weightRows(t.b(), n, k)});
                    float[] expected = rowsOf(bias, m, n);
                    float[] initial = expected.clone();
                    Gemm.multiply(t.a(), packed, expected, 0, n, true, 1);
                    if (format == PackedMatrix.Format.F32) {
                        t.assertMatchesReference(initial, expected);
                    }
                    for (int threads = 1; threads <= 3; threads++) {
                        float[] c = new float[m * n];
                        Arrays.fill(c, Float.NaN);
                        Gemm.multiply(t.a(), 0, m, packed, bias, c, 0, n, threads);
                        assertSameBits(expected, c, format + " m=" + m + " n=" + n + " k=" + k + ", " + threads + " threads");
                    }
                }
            }
        }
    }

    /** Infinite, NaN and signed-zero biases come out as IEEE 754 additions say, and with K = 0 C is the bias. */
    @Test
    void specialBiasValuesAndZeroDepth() {
        float[] bias = {-0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 2.5f};
        PackedMatrix empty = Gemm.pack(MatrixView.rowMajor(new float[0], 0, bias.length));
        float[] c = new float[2 * bias.length];
        Arrays.fill(c, 7f);
        Gemm.multiply(MatrixView.rowMajor(new float[0], 2, 0), 0, 2, empty, bias, c, 0, bias.length, 1);
        assertSameBits(rowsOf(bias, 2, bias.length), c, "K = 0");

        float[] b = new float[3 * bias.length];
        Arrays.fill(b, 1f);
        PackedMatrix ones = Gemm.pack(MatrixView.rowMajor(b, 3, bias.length));
        float[] a = {1f, 2f, -3f};       // A * B = 0 in every column: +0 from a chain of FMAs from +0
        Gemm.multiply(MatrixView.rowMajor(a, 1, 3), 0, 1, ones, bias, c, 0, bias.length, 1);
        float[] expected = {0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 2.5f};
        assertSameBits(expected, Arrays.copyOf(c, bias.length), "A * B = 0");
    }

    @Test
    void shortBiasIsRejected() {
        PackedMatrix b = Gemm.pack(MatrixView.rowMajor(new float[6], 2, 3));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(MatrixView.rowMajor(new float[2], 1, 2), 0, 1, b, new float[2], new float[3], 0, 3, 1));
        assertEquals("bias.length must be >= b.cols() (3), got 2", e.getMessage());
    }

    private static float[] bias(int n, SplittableRandom random) {
        float[] bias = new float[n];
        for (int j = 0; j < n; j++) {
            bias[j] = RandomTensors.uniformValue(random);
        }
        return bias;
    }

    /** {@code m} rows of {@code n} floats, each a copy of {@code bias}. */
    private static float[] rowsOf(float[] bias, int m, int n) {
        float[] rows = new float[m * n];
        for (int i = 0; i < m; i++) {
            System.arraycopy(bias, 0, rows, i * n, n);
        }
        return rows;
    }

    /** B ({@code k x n}) as the rows of the {@code nn.Linear} weight {@code B^T} ({@code n x k}). */
    private static WeightRows weightRows(MatrixView b, int n, int k) {
        float[] w = new float[n * k];
        for (int j = 0; j < n; j++) {
            for (int p = 0; p < k; p++) {
                w[j * k + p] = b.get(p, j);
            }
        }
        return WeightRows.of("w", w, n, k);
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]),
                    what + ": element " + i + " is " + actual[i] + ", expected " + expected[i]);
        }
    }
}
