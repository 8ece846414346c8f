package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * The three ways the attention kernel shares out (batch row, key/value head) sources with more
 * than one query tile each: one task per source that packs it and runs all its query tiles (one
 * thread, or sources enough to keep every thread busy), sources cut into chunks of query tiles
 * that each pack their own copy (few sources, many tiles), and every source packed first for all
 * tasks (the rest). Each must match the double-precision reference and the others bit for bit.
 */
class ManySourcesTest {
    /** {heads, kvHeads}: plain and grouped. */
    private static final int[][] HEADS = {{2, 2}, {4, 4}, {4, 2}, {6, 3}, {8, 2}};
    private static final int[] WIDTHS = {7, 16, 32, 33};
    private static final int[] THREADS = {1, 2, 3, 8};

    @Test
    void matchesReferenceAndEveryThreadCount() {
        qt().withExamples(30).forAll(integers().between(25, 150), integers().between(1, 200),
                        integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(ManySourcesTest::check);
    }

    /**
     * One to three sources of 5 to 12 query tiles each: two and three threads cut a source into
     * chunks where the sources alone would leave a thread idle (one or three sources on two
     * threads, one or two on three); eight threads pack first.
     */
    @Test
    void fewSourcesWithManyQueryTilesMatchEveryThreadCount() {
        qt().withExamples(12).forAll(integers().between(240, 576), integers().between(1, 300),
                        integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert((lq, lk, maskKind, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    int kvHeads = 1 + random.nextInt(3);
                    check(random, 1, kvHeads, kvHeads, lq, lk, maskKind);
                });
    }

    private static void check(int lq, int lk, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] hv = HEADS[random.nextInt(HEADS.length)];
        int heads = hv[0], kvHeads = hv[1];
        // 16 to 32 sources: one thread packs in each task; eight threads pack first or in chunks.
        int batch = (16 + random.nextInt(17) + kvHeads - 1) / kvHeads;
        check(random, batch, heads, kvHeads, lq, lk, maskKind);
    }

    private static void check(SplittableRandom random, int batch, int heads, int kvHeads, int lq, int lk, int maskKind) {
        int d = WIDTHS[random.nextInt(WIDTHS.length)], dv = WIDTHS[random.nextInt(WIDTHS.length)];
        Tensor q = uniform(random, batch, heads, lq, d);
        Tensor k = uniform(random, batch, kvHeads, lk, d);
        Tensor v = uniform(random, batch, kvHeads, lk, dv);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, heads, lq, lk);
        float scale = (float) (random.nextDouble(0.2, 2) / Math.sqrt(d));
        String what = "B=" + batch + " H=" + heads + " KVH=" + kvHeads + " Lq=" + lq + " Lk=" + lk + " d=" + d + " dv=" + dv + " " + mask;
        float[] one = ScaledDotProductAttention.apply(q, k, v, mask, scale, 1).toArray();
        Tolerance.assertClose(ReferenceAttention.scaledDotProduct(q, k, v, mask, scale).output().toArray(), one,
                d + lk + Tolerance.maskBiasTerms(mask, lq, lk), what);
        for (int threads : THREADS) {
            assertArrayEquals(one, ScaledDotProductAttention.apply(q, k, v, mask, scale, threads).toArray(), 0f,
                    what + ", " + threads + " threads");
        }
    }
}
