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
 * The split-keys path: when every head has a single query tile (up to 48 queries, as in decoding)
 * and more than one split of keys (at least 512 on every path), splits are computed as separate
 * tasks and merged. Checked against the reference, across thread counts, and through the cache.
 */
class SplitKeysTest {
    private static final int[] QUERY_LENGTHS = {1, 4, 17, 48};

    @Test
    void splitKeysMatchTheReference() {
        qt().withExamples(25).forAll(integers().between(600, 5000), integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert((lk, kind, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    int lq = QUERY_LENGTHS[random.nextInt(QUERY_LENGTHS.length)];
                    Tensor q = uniform(random, 2, 4, lq, 16), k = uniform(random, 2, 2, lk, 16), v = uniform(random, 2, 2, lk, 9);
                    AttentionMask mask = RandomMasks.of(kind, random, 2, 4, lq, lk);
                    float[] expected = ReferenceAttention.scaledDotProduct(q, k, v, mask, 0.4f).output().toArray();
                    float[] one = ScaledDotProductAttention.apply(q, k, v, mask, 0.4f, 1).toArray();
                    String what = "Lq=" + lq + " Lk=" + lk + " " + mask;
                    Tolerance.assertClose(expected, one, 16 + lk + Tolerance.maskBiasTerms(mask, lq, lk), what);
                    for (int threads : new int[]{2, 8}) {
                        assertArrayEquals(one, ScaledDotProductAttention.apply(q, k, v, mask, 0.4f, threads).toArray(), 0f,
                                what + ", " + threads + " threads");
                    }
                });
    }

    @Test
    void decodingPastOneSplitEqualsTheFullCausalPass() {
        int e = 32, prefill = 2030, steps = 40, length = prefill + steps;
        SplittableRandom random = new SplittableRandom(11);
        Tensor x = uniform(random, 2, length, e);
        float[] xs = x.toArray();
        float[] expected = null;
        for (int threads : new int[]{1, 2, 8}) {
            MultiHeadAttention m = MultiHeadAttention.builder(e, 8).kvHeads(2).seed(12).threads(threads).build();
            float[] full = m.forward(x, AttentionMask.causal()).toArray();
            KvCache cache = m.newKvCache(2, 16);
            float[] chunk = new float[2 * prefill * e];
            for (int b = 0; b < 2; b++) {
                System.arraycopy(xs, b * length * e, chunk, b * prefill * e, prefill * e);
            }
            m.forwardCached(Tensor.of(chunk, 2, prefill, e), cache);
            float[] decoded = new float[2 * steps * e];
            float[] fromFull = new float[2 * steps * e];
            for (int t = 0; t < steps; t++) {
                float[] token = new float[2 * e];
                for (int b = 0; b < 2; b++) {
                    System.arraycopy(xs, (b * length + prefill + t) * e, token, b * e, e);
                }
                float[] y = m.forwardCached(Tensor.of(token, 2, 1, e), cache).toArray();
                for (int b = 0; b < 2; b++) {
                    System.arraycopy(y, b * e, decoded, (b * steps + t) * e, e);
                    System.arraycopy(full, (b * length + prefill + t) * e, fromFull, (b * steps + t) * e, e);
                }
            }
            Tolerance.assertClose(fromFull, decoded, 2 * e + length, threads + " threads");
            if (expected == null) {
                expected = decoded;
            } else {
                assertArrayEquals(expected, decoded, 0f, threads + " threads against 1");
            }
        }
    }
}
