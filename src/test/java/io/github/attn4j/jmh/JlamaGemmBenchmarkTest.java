package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tjake.jlama.tensor.FloatBufferTensor;
import com.github.tjake.jlama.tensor.operations.PanamaTensorOperations;
import com.github.tjake.jlama.util.MachineSpec;
import org.junit.jupiter.api.Test;

/**
 * Jlama's {@code batchDotProduct} as {@link JlamaGemmBenchmark} calls it: the operand convention
 * ({@code C = A * B^T}, B given as rows) against a double-precision loop, and the setup check
 * against attn4j's GEMM on small shapes.
 */
class JlamaGemmBenchmarkTest {
    private static final double U = 0x1p-24;

    /** {@code |c - a * bRows^T| <= gamma_K * sum |a||b|} element by element, in double. */
    private static void assertIsProduct(float[] a, float[] bRows, int m, int n, int k, FloatBufferTensor c) {
        double gamma = k * U / (1 - k * U);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double exact = 0;
                double magnitude = 0;
                for (int p = 0; p < k; p++) {
                    exact += (double) a[i * k + p] * bRows[j * k + p];
                    magnitude += Math.abs((double) a[i * k + p] * bRows[j * k + p]);
                }
                double error = Math.abs(c.get(i, j) - exact);
                assertTrue(error <= gamma * magnitude, "C[" + i + "][" + j + "] = " + c.get(i, j) + ", exact " + exact);
            }
        }
    }

    @Test
    void squareComputesTheProductOfGemmBenchmarkOperands() {
        JlamaGemmBenchmark.Square s = new JlamaGemmBenchmark.Square();
        s.size = 64;
        s.setup();
        FloatBufferTensor c = new JlamaGemmBenchmark().square(s);

        float[] a = GemmBenchmark.random(64 * 64, 1);
        float[] b = GemmBenchmark.random(64 * 64, 2);
        float[] bRows = new float[64 * 64];
        for (int k = 0; k < 64; k++) {
            for (int j = 0; j < 64; j++) {
                bRows[j * 64 + k] = b[k * 64 + j];
            }
        }
        assertIsProduct(a, bRows, 64, 64, 64, c);
    }

    @Test
    void projectionMultipliesByTheTransposedLinearWeight() {
        JlamaGemmBenchmark.Projection p = new JlamaGemmBenchmark.Projection();
        p.seqLen = 32;
        p.setup();
        FloatBufferTensor y = new JlamaGemmBenchmark().projection(p);

        assertEquals(GemmBenchmark.QKV, y.shape().dim(1));
        assertIsProduct(GemmBenchmark.random(32 * GemmBenchmark.D_MODEL, 3),
                GemmBenchmark.random(GemmBenchmark.QKV * GemmBenchmark.D_MODEL, 4),
                32, GemmBenchmark.QKV, GemmBenchmark.D_MODEL, y);
    }

    @Test
    void overwritesTheResultInsteadOfAccumulating() {
        int m = 24, n = 48, k = 64;
        float[] a = GemmBenchmark.random(m * k, 5);
        float[] bRows = GemmBenchmark.random(n * k, 6);
        FloatBufferTensor c = new FloatBufferTensor(m, n);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                c.set(Float.NaN, i, j);
            }
        }
        PanamaTensorOperations ops = new PanamaTensorOperations(MachineSpec.VECTOR_TYPE);
        ops.batchDotProduct(c, JlamaGemmBenchmark.tensor(a, m, k), JlamaGemmBenchmark.tensor(bRows, n, k), 0, 0, k);
        ops.batchDotProduct(c, JlamaGemmBenchmark.tensor(a, m, k), JlamaGemmBenchmark.tensor(bRows, n, k), 0, 0, k);
        assertIsProduct(a, bRows, m, n, k, c);
        JlamaGemmBenchmark.checkAgainstGemm(a, bRows, m, n, k, c);
    }

    @Test
    void checkRejectsAWrongElementOrTheWrongOperandLayout() {
        int m = 24, n = 48, k = 64;
        float[] a = GemmBenchmark.random(m * k, 7);
        float[] bRows = GemmBenchmark.random(n * k, 8);
        PanamaTensorOperations ops = new PanamaTensorOperations(MachineSpec.VECTOR_TYPE);
        FloatBufferTensor c = new FloatBufferTensor(m, n);
        ops.batchDotProduct(c, JlamaGemmBenchmark.tensor(a, m, k), JlamaGemmBenchmark.tensor(bRows, n, k), 0, 0, k);

        c.set(c.get(m - 1, n - 1) + 1e-3f, m - 1, n - 1);
        IllegalStateException wrong = assertThrows(IllegalStateException.class,
                () -> JlamaGemmBenchmark.checkAgainstGemm(a, bRows, m, n, k, c));
        assertTrue(wrong.getMessage().contains("C[23][47]"), wrong.getMessage());

        float[] square = GemmBenchmark.random(k * k, 9);
        float[] squareTransposed = new float[k * k];
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) {
                squareTransposed[j * k + i] = square[i * k + j];
            }
        }
        FloatBufferTensor d = new FloatBufferTensor(m, k);
        ops.batchDotProduct(d, JlamaGemmBenchmark.tensor(a, m, k), JlamaGemmBenchmark.tensor(square, k, k), 0, 0, k);
        assertThrows(IllegalStateException.class, () -> JlamaGemmBenchmark.checkAgainstGemm(a, squareTransposed, m, k, k, d));
        JlamaGemmBenchmark.checkAgainstGemm(a, square, m, k, k, d);
    }
}
