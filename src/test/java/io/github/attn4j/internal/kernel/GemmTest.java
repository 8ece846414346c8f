package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import io.github.attn4j.RandomTensors;

import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

class GemmTest {
    private static final int MR = Kernels.MR;
    private static final int NR = Kernels.NR;
    private static final Blocking DEFAULT = Blocking.DEFAULT;

    /** Sizes that must always be covered: 1, primes around the block sizes, the odd 207. */
    private static final List<Integer> SPECIAL_SIZES = List.of(0, 1, 2, 5, 6, 7, 13, 16, 17, 31, 32, 33, 207);

    private static final Gen<Integer> DIM = Generate.pick(SPECIAL_SIZES).mix(Generate.range(0, 300), 50);
    private static final Gen<Boolean> BOOL = Generate.booleans();

    private static Gen<GemmCase> cases(Gen<Integer> dim) {
        Gen<Integer> pad = Generate.pick(List.of(0, 0, 1, 3, 40));
        Gen<Long> seed = Generate.longRange(Long.MIN_VALUE, Long.MAX_VALUE);
        return in -> new GemmCase(dim.generate(in), dim.generate(in), dim.generate(in),
                BOOL.generate(in), BOOL.generate(in), pad.generate(in), BOOL.generate(in), seed.generate(in));
    }

    /** Small block sizes, so that small matrices cross many KC, MC, NC and column group boundaries. */
    private static final Gen<Blocking> SMALL_BLOCKING = in -> new Blocking(
            Generate.range(1, 40).generate(in),
            MR * Generate.range(1, 6).generate(in),
            NR * Generate.range(1, 3).generate(in),
            NR * Generate.range(1, 3).generate(in),
            Generate.pick(List.of(0, NR, 2 * NR, Integer.MAX_VALUE)).generate(in));

    private static float[] run(GemmCase t, boolean packed, Blocking blocking) {
        float[] c = t.c();
        if (packed) {
            Gemm.multiply(t.a(), Gemm.pack(t.b(), blocking), c, t.cOffset(), t.ldc(), t.accumulate(), blocking);
        } else {
            Gemm.multiply(t.a(), t.b(), c, t.cOffset(), t.ldc(), t.accumulate(), blocking);
        }
        return c;
    }

    private static void check(GemmCase t, boolean packed, Blocking blocking) {
        t.assertMatchesReference(t.c(), run(t, packed, blocking));
    }

    private static void checkPublicApi(GemmCase t, boolean packed) {
        float[] c = t.c();
        if (packed) {
            Gemm.multiply(t.a(), Gemm.pack(t.b()), c, t.cOffset(), t.ldc(), t.accumulate());
        } else {
            Gemm.multiply(t.a(), t.b(), c, t.cOffset(), t.ldc(), t.accumulate());
        }
        t.assertMatchesReference(t.c(), c);
    }

    @Test
    void matchesReferenceOnRandomShapes() {
        qt().withExamples(150).forAll(cases(DIM), BOOL).checkAssert(GemmTest::checkPublicApi);
    }

    @Test
    void matchesReferenceWithSmallBlocksCrossingEveryBoundary() {
        qt().withExamples(300).forAll(cases(Generate.range(0, 90)), BOOL, SMALL_BLOCKING)
                .checkAssert(GemmTest::check);
    }

    @Test
    void matchesReferenceOnAllCombinationsOfTheSpecialSizes() {
        int[] sizes = {1, 13, 17, 207};
        long seed = 1;
        for (int m : sizes) {
            for (int n : sizes) {
                for (int k : sizes) {
                    seed++;
                    boolean transA = (seed & 1) != 0;
                    boolean transB = (seed & 2) != 0;
                    GemmCase t = new GemmCase(m, n, k, transA, transB, (int) (seed % 3), (seed & 4) != 0, seed);
                    checkPublicApi(t, (seed & 8) != 0);
                }
            }
        }
    }

    @Test
    void matchesReferenceInAllFourTransposeCombinations() {
        for (int mask = 0; mask < 16; mask++) {
            GemmCase t = new GemmCase(37, 45, 29, (mask & 1) != 0, (mask & 2) != 0, 2, (mask & 4) != 0, mask);
            checkPublicApi(t, (mask & 8) != 0);
        }
    }

    /** Shapes one below, at and one past the default KC, MC and NC, packed and not. */
    @Test
    void matchesReferenceAcrossDefaultBlockBoundaries() {
        int kc = DEFAULT.kc();
        int mc = DEFAULT.mc();
        int nc = DEFAULT.nc();
        int[][] shapes = {
                {5, 7, kc - 1}, {5, 7, kc}, {5, 7, kc + 1}, {3, 40, 2 * kc + 1},
                {mc - 1, 33, 9}, {mc, 33, 9}, {mc + 1, 33, 9}, {2 * mc + 5, 20, kc + 3},
                {4, nc - 1, 3}, {4, nc, 3}, {4, nc + 1, 3}, {mc + 1, nc + 1, kc + 1}};
        long seed = 100;
        for (int[] s : shapes) {
            for (int variant = 0; variant < 2; variant++) {
                seed++;
                boolean odd = variant == 1;
                GemmCase t = new GemmCase(s[0], s[1], s[2], odd, !odd, variant, odd, seed);
                checkPublicApi(t, odd);
            }
        }
    }

    /**
     * The reduction order of an element depends on KC only: the MC, NC and column group blocking,
     * A packed by depth or row-major, and packing B beforehand, give bit-identical results. A
     * parallel split of the row blocks relies on this.
     */
    @Test
    void resultBitsDoNotDependOnRowOrColumnBlockingNorOnPrepacking() {
        qt().withExamples(100).forAll(cases(Generate.range(0, 120)), SMALL_BLOCKING, SMALL_BLOCKING)
                .checkAssert((t, b1, b2) -> {
                    Blocking other = new Blocking(b1.kc(), b2.mc(), b2.nc(), b2.nb(), b2.depthColumns());
                    float[] expected = run(t, false, b1);
                    assertArrayEquals(expected, run(t, true, other), t + " " + b1 + " vs packed " + other);
                    assertArrayEquals(expected, run(t, false, other), t + " " + b1 + " vs " + other);
                });
    }

    /**
     * A packed by depth (every full micro-panel and an eight-row tail, whenever the micro-kernel
     * reads them so) gives the bits of A packed row-major, over shapes that end in partial
     * micro-panels and partial column panels, with several K blocks, accumulating or not, A transposed or not; and the reference.
     */
    @Test
    void aPackedByDepthGivesTheBitsOfRowMajor() {
        qt().withExamples(150).forAll(cases(Generate.range(0, 90)), SMALL_BLOCKING)
                .checkAssert((t, b) -> {
                    Blocking rowMajor = new Blocking(b.kc(), b.mc(), b.nc(), b.nb(), Integer.MAX_VALUE);
                    Blocking byDepth = new Blocking(b.kc(), b.mc(), b.nc(), b.nb(), 0);
                    float[] expected = run(t, false, rowMajor);
                    t.assertMatchesReference(t.c(), expected);
                    assertArrayEquals(expected, run(t, false, byDepth), t + " " + byDepth);
                    assertArrayEquals(expected, run(t, true, byDepth), t + " packed, " + byDepth);
                });
    }

    /**
     * The packing itself: full groups by depth, then the rest by depth when exactly the tail's
     * rows are left (groups of 12 with a tail of 8 as the twelve-row kernel reads them, and a tail
     * of 5 after groups of 6), row-major otherwise.
     */
    @Test
    void packByDepthPutsEachGroupStepAfterStep() {
        int[][] layouts = {{MR, 0, 5}, {12, 8, 8}, {12, 8, 5}, {6, 5, 5}, {6, 5, 4}};
        for (int[] layout : layouts) {
            int group = layout[0], tail = layout[1], rows = 2 * group + layout[2], kc = 37;
            float[] src = new float[rows * 40];
            for (int i = 0; i < src.length; i++) {
                src[i] = i;
            }
            MatrixView a = MatrixView.rowMajor(src, rows, 40);
            float[] dst = new float[rows * kc];
            Packing.packA(a, 0, rows, 2, kc, dst, group, tail);
            int deep = rows / group * group;
            boolean tailByDepth = rows - deep == tail;
            for (int i = 0; i < rows; i++) {
                for (int p = 0; p < kc; p++) {
                    int at = i < deep ? i / group * group * kc + p * group + i % group
                            : tailByDepth ? deep * kc + p * tail + i - deep : i * kc + p;
                    assertEquals(src[i * 40 + 2 + p], dst[at], Arrays.toString(layout) + ": row " + i + ", depth " + p);
                }
            }
        }
    }

    /**
     * A row-major A is read in place unless its rows are a multiple of 4 KiB apart: the same
     * values with rows 1024 floats apart (packed) and {@code k + 3} apart (in place) give the same
     * bits, over a decode step's rows and the micro-kernel's, one K block and several, on float32
     * and BF16 panels, one and three threads; and the reference.
     */
    @Test
    void aReadInPlaceGivesTheBitsOfAPackedCopy() {
        SplittableRandom random = new SplittableRandom(17);
        for (int k : new int[]{45, 900}) {
            for (int m : new int[]{1, 2, 5, 13, 20, 140}) {
                int n = 70;
                float[] values = RandomTensors.uniformArray(random, m * k);
                MatrixView packedRows = rowsApart(values, m, k, 1024);
                MatrixView inPlace = rowsApart(values, m, k, k + 3);
                assertTrue(!Gemm.readsInPlace(packedRows) && Gemm.readsInPlace(inPlace), "views of " + m + " x " + k);
                float[] w = RandomTensors.uniformArray(random, n * k);
                for (PackedMatrix.Format format : new PackedMatrix.Format[]{PackedMatrix.Format.F32, PackedMatrix.Format.BF16}) {
                    PackedMatrix b = Gemm.packWeights(format, new WeightRows[]{WeightRows.of("w", w, n, k)});
                    float[] expected = new float[m * n];
                    Gemm.multiply(packedRows, b, expected, 0, n, false, 1);
                    for (int threads : new int[]{1, 3}) {
                        float[] c = new float[m * n];
                        Gemm.multiply(inPlace, b, c, 0, n, false, threads);
                        assertArrayEquals(expected, c, 0f, format + " m = " + m + ", k = " + k + ", " + threads + " threads");
                    }
                    if (format == PackedMatrix.Format.F32) {
                        GemmCase.assertMatchesReference(inPlace, MatrixView.rowMajor(w, n, k).transpose(), null, expected, 0, n,
                                "in place, m = " + m + ", k = " + k);
                    }
                }
            }
        }
    }

    /** {@code values} ({@code rows x cols}, row-major) copied into rows {@code stride} floats apart, NaN between them. */
    private static MatrixView rowsApart(float[] values, int rows, int cols, int stride) {
        float[] data = new float[(rows - 1) * stride + cols];
        Arrays.fill(data, Float.NaN);
        for (int i = 0; i < rows; i++) {
            System.arraycopy(values, i * cols, data, i * stride, cols);
        }
        return MatrixView.rowMajor(data, 0, rows, cols, stride);
    }

    @Test
    void rowBlockRangesComputedSeparatelyGiveTheSameBits() {
        GemmCase t = new GemmCase(50, 70, 30, false, true, 1, false, 7);
        Blocking blocking = new Blocking(30, 2 * MR, 3 * NR, NR, Integer.MAX_VALUE);
        float[] whole = run(t, false, blocking);

        MatrixView a = t.a();
        float[] packedB = new float[30 * Kernels.roundUp(70, NR)];
        Packing.packB(t.b(), 0, 30, 0, 70, packedB, 0);
        float[] aBuf = new float[2 * MR * 30];
        float[] split = t.c();
        BlockOfB block = new BlockOfB().set(packedB, null, 0, 0, 30, 0, false, null);
        int blocks = (50 + 2 * MR - 1) / (2 * MR);
        Gemm.rowBlocks(a, 0, a.rows(), block, split, t.cOffset(), t.ldc(), 2 * MR, NR, 0, 2, blocks, 0, 70, aBuf);
        Gemm.rowBlocks(a, 0, a.rows(), block, split, t.cOffset(), t.ldc(), 2 * MR, NR, Integer.MAX_VALUE, 0, 2, NR, 70, aBuf);
        Gemm.rowBlocks(a, 0, a.rows(), block, split, t.cOffset(), t.ldc(), 2 * MR, NR, 0, 0, 2, 0, NR, aBuf);
        assertArrayEquals(whole, split);
    }

    @Test
    void zeroReductionLengthClearsOrKeepsC() {
        GemmCase clear = new GemmCase(3, 4, 0, false, false, 2, false, 1);
        float[] c = run(clear, false, DEFAULT);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                assertEquals(0f, c[clear.cOffset() + i * clear.ldc() + j]);
            }
        }
        clear.assertWindowOnlyWritten(c);

        GemmCase keep = new GemmCase(3, 4, 0, true, true, 2, true, 1);
        assertArrayEquals(keep.c(), run(keep, true, DEFAULT));
    }

    @Test
    void emptyOutputsTouchNothing() {
        for (int[] s : new int[][] {{0, 5, 7}, {5, 0, 7}, {0, 0, 0}}) {
            GemmCase t = new GemmCase(s[0], s[1], s[2], false, true, 3, false, 1);
            assertArrayEquals(t.c(), run(t, false, DEFAULT));
            assertArrayEquals(t.c(), run(t, true, DEFAULT));
        }
    }

    /** nn.Linear: y = x W^T with W stored (out, in) row-major and packed once. */
    @Test
    void linearLayerWeightIsPackedOnceAndReused() {
        int in = 70;
        int out = 45;
        float[] w = new float[out * in];
        for (int i = 0; i < w.length; i++) {
            w[i] = (i * 37 % 101 - 50) / 50f;
        }
        PackedMatrix wt = Gemm.pack(MatrixView.rowMajor(w, 0, out, in, in).transpose());
        assertEquals(in, wt.rows());
        assertEquals(out, wt.cols());
        for (int rows : new int[] {1, 9, 31}) {
            float[] x = new float[rows * in];
            for (int i = 0; i < x.length; i++) {
                x[i] = (i * 53 % 97 - 48) / 48f;
            }
            float[] y = new float[rows * out];
            Gemm.multiply(MatrixView.rowMajor(x, rows, in), wt, y, 0, out, false);
            for (int r = 0; r < rows; r++) {
                for (int o = 0; o < out; o++) {
                    double sum = 0;
                    double abs = 0;
                    for (int i = 0; i < in; i++) {
                        sum += (double) x[r * in + i] * w[o * in + i];
                        abs += Math.abs((double) x[r * in + i] * w[o * in + i]);
                    }
                    assertEquals(sum, y[r * out + o], (in + 1) * 0x1p-23 * abs, "y(" + r + ", " + o + ")");
                }
            }
        }
    }

    @Test
    void packedTransposedOperandKeepsShapeAndValues() {
        float[] data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        PackedMatrix p = Gemm.pack(MatrixView.rowMajor(data, 3, 4).transpose());
        assertEquals(4, p.rows());
        assertEquals(3, p.cols());
        float[] c = new float[2 * 3];
        float[] selectRows0And1 = {1, 0, 0, 0, 0, 1, 0, 0};
        Gemm.multiply(MatrixView.rowMajor(selectRows0And1, 2, 4), p, c, 0, 3, false);
        assertArrayEquals(new float[] {0, 4, 8, 1, 5, 9}, c);
    }
}
