package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/** Incremental decoding through {@link KvCache} against the full causal pass. */
class KvCacheTest {
    /** (embedDim, numHeads, kvHeads). */
    private static final int[][] CONFIGS = {{32, 4, 4}, {48, 6, 2}, {64, 8, 1}, {24, 3, 3}};

    @Test
    void chunkedDecodingEqualsTheFullCausalPass() {
        qt().withExamples(60).forAll(integers().between(1, 150), integers().between(0, CONFIGS.length - 1), longs().all())
                .checkAssert((length, config, seed) -> {
                    int[] c = CONFIGS[config];
                    int e = c[0];
                    SplittableRandom random = new SplittableRandom(seed);
                    int batch = 1 + random.nextInt(3);
                    MultiHeadAttention m = MultiHeadAttention.builder(e, c[1]).kvHeads(c[2]).seed(seed).threads(1 + random.nextInt(2)).build();
                    Tensor x = uniform(random, batch, length, e);
                    float[] full = m.forward(x, AttentionMask.causal()).toArray();

                    KvCache cache = m.newKvCache(batch, random.nextInt(4));
                    float[] chunked = new float[full.length];
                    float[] xs = x.toArray();
                    int done = 0;
                    while (done < length) {
                        int t = Math.min(length - done, random.nextInt(4) == 0 ? 1 + random.nextInt(40) : 1);
                        float[] chunk = new float[batch * t * e];
                        for (int b = 0; b < batch; b++) {
                            System.arraycopy(xs, (b * length + done) * e, chunk, b * t * e, t * e);
                        }
                        float[] y = m.forwardCached(Tensor.of(chunk, batch, t, e), cache).toArray();
                        for (int b = 0; b < batch; b++) {
                            System.arraycopy(y, b * t * e, chunked, (b * length + done) * e, t * e);
                        }
                        done += t;
                        assertEquals(done, cache.length());
                    }
                    Tolerance.assertClose(full, chunked, 2 * e + length, "E=" + e + " H=" + c[1] + " KVH=" + c[2] + " L=" + length);
                });
    }

    @Test
    void growsPastItsCapacityAndKeepsWhatItHad() {
        MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(4).build();
        KvCache cache = m.newKvCache(2, 1);
        SplittableRandom random = new SplittableRandom(9);
        Tensor first = uniform(random, 2, 3, 16), second = uniform(random, 2, 5, 16);
        m.forwardCached(first, cache);
        Tensor y = m.forwardCached(second, cache);
        assertEquals(8, cache.length());
        assertTrue(cache.capacity() >= 8);
        float[] both = new float[2 * 8 * 16];
        for (int b = 0; b < 2; b++) {
            System.arraycopy(first.toArray(), b * 3 * 16, both, b * 8 * 16, 3 * 16);
            System.arraycopy(second.toArray(), b * 5 * 16, both, (b * 8 + 3) * 16, 5 * 16);
        }
        float[] full = m.forward(Tensor.of(both, 2, 8, 16), AttentionMask.causal()).toArray();
        float[] tail = new float[2 * 5 * 16];
        for (int b = 0; b < 2; b++) {
            System.arraycopy(full, (b * 8 + 3) * 16, tail, b * 5 * 16, 5 * 16);
        }
        Tolerance.assertClose(tail, y.toArray(), 2 * 16 + 8, "after growth");
        assertArrayEquals(new int[]{2, 0, 16}, m.forwardCached(Tensor.zeros(2, 0, 16), cache).shape());
        assertEquals(8, cache.length());
    }

    @Test
    void truncateRollsBackToAnEarlierLength() {
        MultiHeadAttention m = MultiHeadAttention.builder(24, 3).kvHeads(1).seed(6).build();
        SplittableRandom random = new SplittableRandom(10);
        KvCache cache = m.newKvCache(1, 2);
        m.forwardCached(uniform(random, 1, 6, 24), cache);
        Tensor step = uniform(random, 1, 1, 24);
        float[] first = m.forwardCached(step, cache).toArray();
        m.forwardCached(uniform(random, 1, 3, 24), cache);       // a continuation that gets rejected
        cache.truncate(6);
        assertEquals(6, cache.length());
        assertArrayEquals(first, m.forwardCached(step, cache).toArray(), 0f);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cache.truncate(8));
        assertTrue(e.getMessage().startsWith("newLength") && e.getMessage().contains("[0, 7]"), e.getMessage());
    }

    @Test
    void rejectsMismatchedCaches() {
        MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(4).build();
        MultiHeadAttention other = MultiHeadAttention.builder(16, 2).seed(5).build();
        KvCache cache = m.newKvCache(2, 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.forwardCached(Tensor.zeros(3, 1, 16), cache));
        assertTrue(e.getMessage().startsWith("xNew") && e.getMessage().contains("batch B of the cache = 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> other.forwardCached(Tensor.zeros(2, 1, 16), cache));
        assertTrue(e.getMessage().startsWith("cache"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> m.newKvCache(-1, 4));
        assertTrue(e.getMessage().startsWith("batch"), e.getMessage());
        MultiHeadAttention cross = MultiHeadAttention.builder(16, 2).keyDim(8).seed(4).build();
        e = assertThrows(IllegalArgumentException.class, () -> cross.forwardCached(Tensor.zeros(1, 1, 16), cross.newKvCache(1, 1)));
        assertTrue(e.getMessage().startsWith("keyDim/valueDim"), e.getMessage());
        assertThrows(NullPointerException.class, () -> m.forwardCached(Tensor.zeros(2, 1, 16), null));
    }
}
