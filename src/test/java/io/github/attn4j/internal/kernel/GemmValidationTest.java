package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/** {@link Gemm}'s argument checks: one test per kind of bad input, each naming what it rejects. */
class GemmValidationTest {
    private static final int NR = Kernels.NR;

    private static final float[] DATA = new float[12];
    private static final MatrixView A_2X3 = MatrixView.rowMajor(DATA, 2, 3);
    private static final MatrixView B_3X4 = MatrixView.rowMajor(DATA, 3, 4);

    private static void assertMessageMentions(Throwable e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage() != null && e.getMessage().contains(part),
                    "message '" + e.getMessage() + "' should mention '" + part + "'");
        }
    }

    @Test
    void nullOperandsAreNamed() {
        float[] c = new float[8];
        assertMessageMentions(assertThrows(NullPointerException.class,
                () -> Gemm.multiply(null, B_3X4, c, 0, 4, false)), "a");
        assertMessageMentions(assertThrows(NullPointerException.class,
                () -> Gemm.multiply(A_2X3, (MatrixView) null, c, 0, 4, false)), "b");
        assertMessageMentions(assertThrows(NullPointerException.class,
                () -> Gemm.multiply(A_2X3, (PackedMatrix) null, c, 0, 4, false)), "b");
        assertMessageMentions(assertThrows(NullPointerException.class,
                () -> Gemm.multiply(A_2X3, B_3X4, null, 0, 4, false)), "c");
        assertMessageMentions(assertThrows(NullPointerException.class, () -> Gemm.pack(null)), "b");
    }

    @Test
    void innerDimensionMismatchNamesBothSides() {
        MatrixView b4x4 = MatrixView.rowMajor(new float[16], 4, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(A_2X3, b4x4, new float[8], 0, 4, false));
        assertMessageMentions(e, "a.cols()", "b.rows()", "4", "3");
        IllegalArgumentException packed = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(A_2X3, Gemm.pack(b4x4), new float[8], 0, 4, false));
        assertMessageMentions(packed, "a.cols()", "b.rows()");
    }

    @Test
    void leadingDimensionOfCBelowNIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(A_2X3, B_3X4, new float[100], 0, 3, false));
        assertMessageMentions(e, "ldc", "4", "3");
    }

    @Test
    void negativeOutputOffsetIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(A_2X3, B_3X4, new float[100], -1, 4, false));
        assertMessageMentions(e, "cOffset", "-1");
    }

    @Test
    void outputArrayTooShortIsRejectedWithNeededLength() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(A_2X3, B_3X4, new float[12], 5, 6, false));
        assertMessageMentions(e, "c.length", "15", "12");
    }

    @Test
    void outputRangeOverflowingIntIsRejectedNotWrapped() {
        MatrixView tall = MatrixView.of(new float[1], 0, Integer.MAX_VALUE, 1, 0, 0);
        MatrixView one = MatrixView.rowMajor(new float[1], 1, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gemm.multiply(tall, one, new float[16], 0, Integer.MAX_VALUE, false));
        assertMessageMentions(e, "c.length");
    }

    @Test
    void packingMoreThanAnArrayCanHoldIsRejected() {
        MatrixView huge = MatrixView.of(new float[1], 0, 70_000, 70_000, 0, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Gemm.pack(huge));
        assertMessageMentions(e, "b", String.valueOf(70_000L * Kernels.roundUp(70_000, NR)));
    }

    /** Whatever the offsets, leading dimensions and lengths, the only failure is a clean IAE. */
    @Test
    void arbitraryOutputGeometryNeverIndexesOutOfBounds() {
        Gen<Integer> small = Generate.range(-3, 30);
        qt().withExamples(2000).forAll(small, small, small, Generate.range(0, 3))
                .checkAssert((cOffset, ldc, cLength, shape) -> {
                    float[] c = new float[Math.max(0, cLength)];
                    MatrixView a = shape == 0 ? A_2X3 : MatrixView.rowMajor(DATA, shape, 3);
                    try {
                        Gemm.multiply(a, B_3X4, c, cOffset, ldc, false);
                        Gemm.multiply(a, Gemm.pack(B_3X4), c, cOffset, ldc, true);
                    } catch (IllegalArgumentException expected) {
                        assertTrue(expected.getMessage().matches(".*(ldc|cOffset|c\\.length).*"),
                                expected.getMessage());
                    }
                });
    }

    @Test
    void rowRangeOutsideAIsRejectedWithTheRange() {
        PackedMatrix b = Gemm.pack(B_3X4);
        float[] c = new float[8];
        for (int[] r : new int[][]{{-1, 1}, {0, 3}, {2, 1}, {1, -1}, {Integer.MAX_VALUE, 2}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Gemm.multiply(A_2X3, r[0], r[1], b, null, c, 0, 4, 1));
            assertMessageMentions(e, "rows", "2 rows of a", "[" + r[0] + ", ");
        }
    }
}
