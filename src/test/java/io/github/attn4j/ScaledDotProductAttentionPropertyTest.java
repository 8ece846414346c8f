package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.arbitrary;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** The Vector API attention kernel against the scalar reference on random shapes, heads and masks. */
class ScaledDotProductAttentionPropertyTest {
    /** Lengths 1..300, half the time one of the edge sizes. */
    static final Gen<Integer> LENGTHS = integers().between(1, 300).mix(arbitrary().pick(1, 13, 17, 207), 50);
    /**
     * Key lengths 1..600, up to three key tiles of 256 (so that the online softmax meets a row's
     * maximum raised across tiles), half the time an edge size: one past one and two tiles too.
     */
    static final Gen<Integer> KEY_LENGTHS = integers().between(1, 600).mix(arbitrary().pick(1, 13, 17, 207, 257, 513), 50);
    // {8, 1} and {7, 1}: a single query row per head makes a tile of 8 or 7 rows, which the decode-step products take in two groups.
    private static final int[][] HEADS = {{1, 1}, {2, 2}, {4, 2}, {6, 3}, {4, 1}, {3, 3}, {8, 1}, {7, 1}};
    private static final int[] WIDTHS = {1, 7, 13, 16, 17, 32, 33, 64};

    @Test
    void kernelMatchesReference() {
        qt().withExamples(250).forAll(LENGTHS, KEY_LENGTHS, integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(ScaledDotProductAttentionPropertyTest::check);
    }

    @Test
    void edgeLengthsWithEveryMaskKind() {
        int[] sizes = {1, 13, 17, 207};
        for (int lq : sizes) {
            for (int lk : sizes) {
                for (int kind = 0; kind < RandomMasks.KINDS; kind++) {
                    check(lq, lk, kind, 31L * lq + 7L * lk + kind);
                }
            }
        }
    }

    private static void check(int lq, int lk, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int batch = 1 + random.nextInt(3);
        int[] hv = HEADS[random.nextInt(HEADS.length)];
        int heads = hv[0], kvHeads = hv[1];
        int d = WIDTHS[random.nextInt(WIDTHS.length)], dv = WIDTHS[random.nextInt(WIDTHS.length)];
        Tensor q = uniform(random, batch, heads, lq, d);
        Tensor k = uniform(random, batch, kvHeads, lk, d);
        Tensor v = uniform(random, batch, kvHeads, lk, dv);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, heads, lq, lk);
        float scale = (float) (random.nextDouble(0.2, 2) / Math.sqrt(d));
        AttentionOutput expected = ReferenceAttention.scaledDotProduct(q, k, v, mask, scale);
        String what = "B=" + batch + " H=" + heads + " KVH=" + kvHeads + " Lq=" + lq + " Lk=" + lk + " d=" + d + " dv=" + dv + " " + mask;
        int n = d + lk + Tolerance.maskBiasTerms(mask, lq, lk);
        Tolerance.assertClose(expected.output().toArray(), ScaledDotProductAttention.apply(q, k, v, mask, scale).toArray(), n, what);
        AttentionOutput both = ScaledDotProductAttention.applyWithWeights(q, k, v, mask, scale);
        Tolerance.assertClose(expected.output().toArray(), both.output().toArray(), n, what + " (materialized)");
        Tolerance.assertClose(expected.weights().toArray(), both.weights().toArray(), n, what + " weights");
    }
}
