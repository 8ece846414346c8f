package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.ScaledDotProductAttentionPropertyTest.LENGTHS;
import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** Thread count never changes a bit of the result: 1, 2 and 8 threads compared exactly. */
class ThreadDeterminismTest {
    private static final int[] THREADS = {1, 2, 8};

    @Test
    void moduleOutputIsBitIdenticalForEveryThreadCount() {
        qt().withExamples(40).forAll(LENGTHS, LENGTHS, integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert((lq, lk, kind, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    int batch = 1 + random.nextInt(3);
                    Tensor q = uniform(random, batch, lq, 48);
                    Tensor kv = uniform(random, batch, lk, 48);
                    AttentionMask mask = RandomMasks.of(kind, random, batch, 4, lq, lk);
                    float[] expected = null;
                    float[] expectedWeights = null;
                    for (int threads : THREADS) {
                        MultiHeadAttention m = MultiHeadAttention.builder(48, 4).kvHeads(2).seed(seed).threads(threads).build();
                        float[] self = m.forward(q, AttentionMask.causal()).toArray();
                        AttentionOutput cross = m.forwardWithWeights(q, kv, kv, mask);
                        float[] both = concat(self, m.forward(q, kv, kv, mask).toArray(), cross.output().toArray());
                        if (expected == null) {
                            expected = both;
                            expectedWeights = cross.weights().toArray();
                        } else {
                            assertArrayEquals(expected, both, 0f, threads + " threads");
                            assertArrayEquals(expectedWeights, cross.weights().toArray(), 0f, threads + " threads (weights)");
                        }
                    }
                });
    }

    @Test
    void scaledDotProductIsBitIdenticalForEveryThreadCount() {
        qt().withExamples(40).forAll(LENGTHS, LENGTHS, integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert((lq, lk, kind, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    Tensor q = uniform(random, 2, 6, lq, 20), k = uniform(random, 2, 3, lk, 20), v = uniform(random, 2, 3, lk, 9);
                    AttentionMask mask = RandomMasks.of(kind, random, 2, 6, lq, lk);
                    float[] one = ScaledDotProductAttention.apply(q, k, v, mask, 0.3f, 1).toArray();
                    for (int threads : THREADS) {
                        assertArrayEquals(one, ScaledDotProductAttention.apply(q, k, v, mask, 0.3f, threads).toArray(), 0f);
                    }
                });
    }

    private static float[] concat(float[]... parts) {
        int n = 0;
        for (float[] p : parts) {
            n += p.length;
        }
        float[] all = new float[n];
        int at = 0;
        for (float[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
