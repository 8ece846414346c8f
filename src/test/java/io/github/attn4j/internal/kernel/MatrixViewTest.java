package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

class MatrixViewTest {

    private static void assertRejected(Class<? extends Throwable> type, Runnable construction, String... parts) {
        Throwable e = assertThrows(type, construction::run);
        for (String part : parts) {
            assertTrue(e.getMessage() != null && e.getMessage().contains(part),
                    "message '" + e.getMessage() + "' should mention '" + part + "'");
        }
    }

    @Test
    void rowMajorElementsAndTransposeReadTheSameArray() {
        float[] data = {9, 9, 0, 1, 2, 9, 3, 4, 5, 9};
        MatrixView v = MatrixView.rowMajor(data, 2, 2, 3, 4);
        assertEquals(2, v.rows());
        assertEquals(3, v.cols());
        assertEquals(5f, v.get(1, 2));
        MatrixView t = v.transpose();
        assertEquals(3, t.rows());
        assertEquals(2, t.cols());
        assertEquals(1, t.rowStride());
        assertEquals(4, t.colStride());
        assertEquals(5f, t.get(2, 1));
        assertEquals(3f, t.get(0, 1));
        data[6] = 7;
        assertEquals(7f, t.get(0, 1));
    }

    @Test
    void getOutsideTheViewThrows() {
        MatrixView v = MatrixView.rowMajor(new float[6], 2, 3);
        assertThrows(IndexOutOfBoundsException.class, () -> v.get(2, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> v.get(0, -1));
    }

    @Test
    void zeroSizedViewsAreLegal() {
        assertEquals(0, MatrixView.rowMajor(new float[0], 0, 0).rows());
        assertEquals(0, MatrixView.rowMajor(new float[3], 3, 0, 5, 5).rows());
        assertEquals(0, MatrixView.of(new float[2], 2, 7, 0, 1, 1).cols());
    }

    @Test
    void nullDataIsNamed() {
        assertRejected(NullPointerException.class, () -> MatrixView.of(null, 0, 1, 1, 1, 1), "data");
        assertRejected(NullPointerException.class, () -> MatrixView.rowMajor(null, 1, 1), "data");
    }

    @Test
    void negativeDimensionsAreNamed() {
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], 0, -1, 2, 2, 1), "rows", "-1");
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], 0, 2, -2, 2, 1), "cols", "-2");
    }

    @Test
    void negativeStridesAreNamed() {
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], 3, 2, 2, -1, 1), "rowStride", "-1");
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], 3, 2, 2, 1, -2), "colStride", "-2");
    }

    @Test
    void negativeOffsetIsNamed() {
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], -1, 1, 1, 1, 1), "offset", "-1");
    }

    @Test
    void emptyViewOffsetPastTheEndIsNamed() {
        assertRejected(IllegalArgumentException.class, () -> MatrixView.of(new float[4], 5, 0, 3, 3, 1),
                "offset", "4", "5");
    }

    @Test
    void leadingDimensionBelowColumnsIsNamed() {
        assertRejected(IllegalArgumentException.class, () -> MatrixView.rowMajor(new float[100], 0, 3, 4, 3),
                "ld", "4", "3");
    }

    @Test
    void viewReachingPastTheArrayGivesNeededAndActualLength() {
        // last element: 1 + 2 * 4 + 3 * 1 = 12, so data.length must be > 12
        assertRejected(IllegalArgumentException.class, () -> MatrixView.rowMajor(new float[12], 1, 3, 4, 4),
                "data.length", "12");
    }

    @Test
    void hugeDimensionsAndStridesDoNotOverflow() {
        assertRejected(IllegalArgumentException.class,
                () -> MatrixView.of(new float[10], 0, Integer.MAX_VALUE, Integer.MAX_VALUE,
                        Integer.MAX_VALUE, Integer.MAX_VALUE),
                "data.length", String.valueOf(2 * (Integer.MAX_VALUE - 1L) * Integer.MAX_VALUE), "10");
    }

    /** Every constructed view only reaches indices inside its array; rejected ones fail cleanly. */
    @Test
    void constructedViewsOnlyReachTheirArray() {
        Gen<Integer> small = Generate.range(-2, 12);
        qt().withExamples(3000).forAll(small, small, small, Generate.range(0, 3))
                .checkAssert((offset, rows, stride, length) -> {
                    float[] data = new float[length * 4];
                    MatrixView v;
                    try {
                        v = MatrixView.of(data, offset, rows, 3, stride, Math.max(0, stride - 1));
                    } catch (IllegalArgumentException rejected) {
                        return;
                    }
                    for (MatrixView w : new MatrixView[] {v, v.transpose()}) {
                        for (int r = 0; r < w.rows(); r++) {
                            for (int c = 0; c < w.cols(); c++) {
                                w.get(r, c);
                            }
                        }
                    }
                });
    }
}
