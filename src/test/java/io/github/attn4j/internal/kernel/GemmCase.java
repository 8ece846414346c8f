package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.attn4j.RandomTensors;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One GEMM test problem: shapes, operand layouts, padding and data, with the arrays built so that
 * any read outside the views or write outside C's window shows up.
 *
 * <p>Every float of the operand arrays outside their views is NaN, so reading one poisons a
 * result. C's array around the {@code m x n} window holds a sentinel that must survive, and
 * without {@code accumulate} the window itself starts as NaN, so an element the kernel forgets
 * to write fails the comparison.
 *
 * @param m          rows of A and C
 * @param n          columns of B and C
 * @param k          reduction length
 * @param transA     A is read through {@code transpose()} of a row-major K x M array
 * @param transB     B is read through {@code transpose()} of a row-major N x K array
 * @param pad        extra leading-dimension columns and offsets of all three arrays
 * @param accumulate C += A * B instead of C = A * B
 * @param seed       seed of the operand values
 */
record GemmCase(int m, int n, int k, boolean transA, boolean transB, int pad, boolean accumulate, long seed) {
    /** Value of C's array outside the written window. */
    static final float SENTINEL = -12345.5f;

    /** Unit roundoff of float: 2^-24. */
    private static final double U_FLOAT = 0x1p-24;
    /** Unit roundoff of double: 2^-53. */
    private static final double U_DOUBLE = 0x1p-53;

    MatrixView a() {
        return operand(m, k, transA, seed);
    }

    MatrixView b() {
        return operand(k, n, transB, seed ^ 0x5DEECE66DL);
    }

    int cOffset() {
        return 3 * pad;
    }

    int ldc() {
        return n + pad;
    }

    /** C's array: sentinel everywhere, the window NaN or (with accumulate) random values. */
    float[] c() {
        int length = m == 0 ? cOffset() + pad : cOffset() + (m - 1) * ldc() + n + pad;
        float[] c = new float[length];
        Arrays.fill(c, SENTINEL);
        SplittableRandom random = new SplittableRandom(seed ^ 0x2545F4914F6CDD1DL);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                c[cOffset() + i * ldc() + j] = accumulate ? uniform(random) : Float.NaN;
            }
        }
        return c;
    }

    /**
     * An {@code rows x cols} view of a row-major array with leading dimension {@code cols + pad}
     * and offset {@code pad} (or of its transpose), values uniform in [-1, 1), NaN elsewhere.
     */
    private MatrixView operand(int rows, int cols, boolean transposed, long valueSeed) {
        int storedRows = transposed ? cols : rows;
        int storedCols = transposed ? rows : cols;
        int ld = storedCols + pad;
        float[] data = new float[pad + storedRows * ld + pad];
        Arrays.fill(data, Float.NaN);
        SplittableRandom random = new SplittableRandom(valueSeed);
        for (int r = 0; r < storedRows; r++) {
            for (int c = 0; c < storedCols; c++) {
                data[pad + r * ld + c] = uniform(random);
            }
        }
        MatrixView stored = MatrixView.rowMajor(data, pad, storedRows, storedCols, ld);
        return transposed ? stored.transpose() : stored;
    }

    private static float uniform(SplittableRandom random) {
        return RandomTensors.uniformValue(random);
    }

    /**
     * Checks {@code got} (C's array after the multiplication, whose initial contents were
     * {@code initial}) against a double-precision triple loop.
     *
     * <p>Tolerance: each C element is a float sum of the {@code k} products (each exact inside
     * its FMA) and, when accumulating, the initial C value. Following one term to the result, it
     * is rounded by the FMAs after it in its K block's chain (at most {@code kc}, its own FMA
     * included), once per later K block added to C, and once more when the first block is added
     * to the initial C: at most {@code kc + ceil(k / kc) <= k + 1} roundings for any
     * {@code 1 <= kc <= k}. Hence {@code |err| <= gamma(k + 1) * sum|term|} with
     * {@code gamma(t) = t u / (1 - t u)}, {@code u = 2^-24} (Higham, Accuracy and Stability of
     * Numerical Algorithms, 2nd ed., lemma 3.1 and section 4.2). The reference is a double sum of
     * the same terms, within the same bound for {@code u = 2^-53}; both bounds are added. This is
     * a worst case, not a statistical estimate, and is still far below the size of any single
     * term a wrong kernel would drop or double (about {@code sum|term| / k}) for the sizes tested.
     */
    void assertMatchesReference(float[] initial, float[] got) {
        assertMatchesReference(a(), b(), accumulate ? initial : null, got, cOffset(), ldc(), toString());
        assertWindowOnlyWritten(got);
    }

    /**
     * The check of {@link #assertMatchesReference(float[], float[])} for any A and B: C (at
     * {@code got[cOffset + i * ldc + j]}) against {@code initial + A * B} ({@code initial} null:
     * {@code A * B}) summed in double, within the same bound.
     */
    static void assertMatchesReference(MatrixView a, MatrixView b, float[] initial, float[] got, int cOffset, int ldc,
                                       String what) {
        int k = a.cols();
        double gamma = gamma(k + 1, U_FLOAT) + gamma(k + 1, U_DOUBLE);
        for (int i = 0; i < a.rows(); i++) {
            for (int j = 0; j < b.cols(); j++) {
                int at = cOffset + i * ldc + j;
                double sum = initial != null ? initial[at] : 0;
                double abs = Math.abs(sum);
                for (int p = 0; p < k; p++) {
                    double term = (double) a.get(i, p) * b.get(p, j);
                    sum += term;
                    abs += Math.abs(term);
                }
                double err = Math.abs(got[at] - sum);
                if (!(err <= gamma * abs)) {
                    fail("C(" + i + ", " + j + ") = " + got[at] + ", reference " + sum + ", |err| = " + err
                            + " > bound " + gamma * abs + " in " + what);
                }
            }
        }
    }

    /** Every float of C's array outside the {@code m x n} window still holds the sentinel. */
    void assertWindowOnlyWritten(float[] got) {
        for (int at = 0; at < got.length; at++) {
            int rel = at - cOffset();
            boolean inside = m > 0 && n > 0 && rel >= 0 && rel / ldc() < m && rel % ldc() < n;
            if (!inside) {
                assertEquals(SENTINEL, got[at], "C array index " + at + " outside the window was written in " + this);
            }
        }
    }

    private static double gamma(int terms, double u) {
        return terms * u / (1 - terms * u);
    }
}
