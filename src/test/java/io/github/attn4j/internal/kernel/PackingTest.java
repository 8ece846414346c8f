package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;

import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** The packed panel layouts documented in {@link Packing}, zero padding included. */
class PackingTest {
    private static final int NR = Kernels.NR;

    /** A rows x cols view with distinct values; row-major with padding, or a transposed one. */
    private static MatrixView view(int rows, int cols, boolean transposed) {
        int storedRows = transposed ? cols : rows;
        int storedCols = transposed ? rows : cols;
        float[] data = new float[2 + storedRows * (storedCols + 3)];
        for (int i = 0; i < data.length; i++) {
            data[i] = i + 1;
        }
        MatrixView v = MatrixView.rowMajor(data, 2, storedRows, storedCols, storedCols + 3);
        return transposed ? v.transpose() : v;
    }

    private static final Gen<Integer> SIZE = Generate.range(1, 70);

    @Test
    void packAWritesTheBlockRowAfterRow() {
        qt().withExamples(300).forAll(SIZE, SIZE, Generate.booleans(), Generate.range(0, 1000))
                .checkAssert((rows, cols, transposed, pick) -> {
                    MatrixView a = view(rows, cols, transposed);
                    int i0 = pick % rows;
                    int mc = 1 + pick / 7 % (rows - i0);
                    int p0 = pick / 3 % cols;
                    int kc = 1 + pick / 11 % (cols - p0);
                    float[] dst = new float[mc * kc + 5];
                    Arrays.fill(dst, Float.NaN);
                    Packing.packA(a, i0, mc, p0, kc, dst, 0, 0);
                    for (int i = 0; i < mc; i++) {
                        for (int p = 0; p < kc; p++) {
                            assertEquals(a.get(i0 + i, p0 + p), dst[i * kc + p], "A(" + i + ", " + p + ") of " + a);
                        }
                    }
                    for (int at = mc * kc; at < dst.length; at++) {
                        assertEquals(Float.NaN, dst[at], "written past the packed block");
                    }
                });
    }

    @Test
    void packBWritesNrColumnPanelsWithZeroColumnsPastTheBlock() {
        qt().withExamples(300).forAll(SIZE, SIZE, Generate.booleans(), Generate.range(0, 1000))
                .checkAssert((rows, cols, transposed, pick) -> {
                    MatrixView b = view(rows, cols, transposed);
                    int p0 = pick % rows;
                    int kc = 1 + pick / 7 % (rows - p0);
                    int j0 = pick / 3 % cols;
                    int nc = 1 + pick / 11 % (cols - j0);
                    int dstOff = pick % 4;
                    int size = kc * Kernels.roundUp(nc, NR);
                    float[] dst = new float[dstOff + size + 5];
                    Arrays.fill(dst, Float.NaN);
                    Packing.packB(b, p0, kc, j0, nc, dst, dstOff);
                    for (int p = 0; p < kc; p++) {
                        for (int j = 0; j < Kernels.roundUp(nc, NR); j++) {
                            float expected = j < nc ? b.get(p0 + p, j0 + j) : 0f;
                            assertEquals(expected, dst[dstOff + j / NR * NR * kc + p * NR + j % NR],
                                    "B(" + p + ", " + j + ") of " + b);
                        }
                    }
                    for (int at = 0; at < dst.length; at++) {
                        if (at < dstOff || at >= dstOff + size) {
                            assertEquals(Float.NaN, dst[at], "written outside the packed block at " + at);
                        }
                    }
                });
    }
}
