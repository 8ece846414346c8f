package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

/**
 * {@link Gemm} on several threads: however a product is split (row blocks, column slices, row
 * ranges, packed A by depth or row after row), every thread count gives the bits of one thread;
 * and concurrent calls from the caller's own threads agree.
 */
class GemmThreadsTest {
    private static final int MR = Kernels.MR;

    /**
     * The product of {@code t} with B prepacked, on one thread: checked against the reference
     * and the unpacked product, then compared bit for bit with the same product on each of
     * {@code threadCounts}.
     */
    private static void assertSameBitsOnEveryThreadCount(GemmCase t, String what, int... threadCounts) {
        PackedMatrix packed = Gemm.pack(t.b());
        float[] one = t.c();
        Gemm.multiply(t.a(), packed, one, t.cOffset(), t.ldc(), t.accumulate(), 1);
        t.assertMatchesReference(t.c(), one);
        float[] unpacked = t.c();
        Gemm.multiply(t.a(), t.b(), unpacked, t.cOffset(), t.ldc(), t.accumulate());
        assertArrayEquals(unpacked, one, 0f, what + " against the unpacked product");
        for (int threads : threadCounts) {
            float[] c = t.c();
            Gemm.multiply(t.a(), packed, c, t.cOffset(), t.ldc(), t.accumulate(), threads);
            assertArrayEquals(one, c, 0f, what + ", " + threads + " threads");
        }
    }

    @Test
    void rowRangeOfAGivesTheBitsOfThoseRowsInTheWholeProduct() {
        // 50 rows with transposed A (column stride != 1) and not: every range, on 1 and 3 threads.
        for (boolean transA : new boolean[]{false, true}) {
            GemmCase t = new GemmCase(50, 70, 45, transA, true, 0, false, 5);
            PackedMatrix packed = Gemm.pack(t.b());
            float[] whole = new float[50 * 70];
            Gemm.multiply(t.a(), packed, whole, 0, 70, false, 1);
            int[][] ranges = {{0, 50}, {0, 1}, {13, 24}, {49, 1}, {7, 0}, {50, 0}};
            for (int[] r : ranges) {
                for (int threads : new int[]{1, 3}) {
                    float[] part = new float[r[1] * 70 + 3];
                    Gemm.multiply(t.a(), r[0], r[1], packed, null, part, 3, 70, threads);
                    assertArrayEquals(Arrays.copyOfRange(whole, r[0] * 70, (r[0] + r[1]) * 70),
                            Arrays.copyOfRange(part, 3, part.length), 0f,
                            "rows [" + r[0] + ", " + (r[0] + r[1]) + "), transA " + transA + ", " + threads + " threads");
                }
            }
        }
    }

    @Test
    void fewRowsSplitByColumnsGiveTheSameBitsOnAnyThreadCount() {
        // n x k = 4.5 million: split by its multiply-adds alone; 300 x 280 (84 thousand): split
        // because a product of fewer than eight rows counts as eight (Gemm.FEW_ROWS).
        for (int[] nk : new int[][]{{3000, 1500}, {300, 280}}) {
            for (int m : new int[]{1, 3, MR + 1}) {
                assertSameBitsOnEveryThreadCount(new GemmCase(m, nk[0], nk[1], false, true, 1, false, 11),
                        "m = " + m + ", n = " + nk[0] + ", k = " + nk[1], 2, 8);
            }
        }
    }

    /**
     * Prepacked B over several K blocks on several threads, where each task keeps its rows and
     * columns through every K block: one row split by columns, 40 rows in uneven row blocks cut
     * into column slices, 150 rows over two column blocks; with and without accumulation into C.
     * The bits of one thread and of the unpacked product, within the float bound of the exact one.
     */
    @Test
    void prepackedProductsOverSeveralKBlocksGiveTheSameBitsOnAnyThreadCount() {
        int[][] shapes = {{1, 700, 1100}, {40, 300, 1100}, {150, 2100, 600}};
        for (int[] s : shapes) {
            for (boolean accumulate : new boolean[]{false, true}) {
                assertSameBitsOnEveryThreadCount(new GemmCase(s[0], s[1], s[2], false, true, 1, accumulate, 13),
                        Arrays.toString(s) + (accumulate ? ", accumulating" : ""), 2, 3, 8);
            }
        }
    }

    @Test
    void unevenRowBlocksCutIntoColumnSlicesGiveTheSameBitsOnAnyThreadCount() {
        // 128 rows on two threads: row blocks of 72 and 56 rows, each cut in two column slices;
        // 37 and 100 rows likewise on 2, 3 and 8 threads; n not a multiple of NR.
        for (int m : new int[]{37, 100, 128}) {
            assertSameBitsOnEveryThreadCount(new GemmCase(m, 600, 300, false, true, 1, false, 5), "m = " + m, 2, 3, 8);
        }
    }

    @Test
    void columnSlicesOnEitherSideOfTheDepthThresholdGiveTheSameBits() {
        // 200 x 1536 with the default blocks: one thread packs A by depth over all 1536 columns,
        // two threads cut row blocks of 108 and 92 rows into 768-column slices (by depth, at
        // the threshold), three threads into 512-column slices (row-major); K = 800 spans two
        // K blocks.
        assertEquals(768, Blocking.DEFAULT.depthColumns());
        for (int k : new int[]{64, 800}) {
            assertSameBitsOnEveryThreadCount(new GemmCase(200, 1536, k, false, true, 1, false, 9), "k = " + k, 2, 3);
        }
    }

    @Test
    void concurrentCallsSharingOnePackedMatrixAgree() throws Exception {
        GemmCase t = new GemmCase(300, 200, 280, false, true, 1, false, 42);
        PackedMatrix b = Gemm.pack(t.b());
        float[] expected = t.c();
        Gemm.multiply(t.a(), b, expected, t.cOffset(), t.ldc(), false);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<float[]>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                boolean shared = i % 2 == 0;
                results.add(pool.submit(() -> {
                    float[] c = t.c();
                    if (shared) {
                        Gemm.multiply(t.a(), b, c, t.cOffset(), t.ldc(), false);
                    } else {
                        Gemm.multiply(t.a(), t.b(), c, t.cOffset(), t.ldc(), false);
                    }
                    return c;
                }));
            }
            for (Future<float[]> f : results) {
                assertArrayEquals(expected, f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
