package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One module shared by several caller threads, each call compared bit for bit with a lone call. */
class ConcurrentUseTest {
    private record Call(Tensor query, Tensor memory, AttentionMask mask, boolean self) {
    }

    @Test
    void concurrentCallsGiveTheSameBitsAsLoneCalls() throws Exception {
        MultiHeadAttention module = MultiHeadAttention.builder(64, 8).kvHeads(4).threads(2).seed(11).build();
        SplittableRandom random = new SplittableRandom(12);
        int[][] shapes = {{1, 1, 1}, {2, 13, 17}, {1, 207, 207}, {3, 40, 9}, {1, 96, 300}};
        List<Call> calls = new ArrayList<>();
        for (int[] s : shapes) {
            for (int kind = 0; kind < RandomMasks.KINDS; kind += 2) {
                boolean self = s[1] == s[2];
                Tensor query = uniform(random, s[0], s[1], 64);
                calls.add(new Call(query, self ? query : uniform(random, s[0], s[2], 64),
                        RandomMasks.of(kind, random, s[0], 8, s[1], s[2]), self));
            }
        }
        List<float[]> alone = new ArrayList<>();
        for (Call c : calls) {
            alone.add(run(module, c));
        }

        int callers = 4, rounds = 12;
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < callers; t++) {
                int offset = t;
                futures.add(pool.submit(() -> {
                    for (int r = 0; r < rounds; r++) {
                        for (int i = 0; i < calls.size(); i++) {
                            int at = (i + offset * 7 + r) % calls.size();
                            assertArrayEquals(alone.get(at), run(module, calls.get(at)), 0f, "call " + at);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdown();
            assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        }
    }

    private static float[] run(MultiHeadAttention module, Call c) {
        return c.self()
                ? module.forward(c.query(), c.mask()).toArray()
                : module.forward(c.query(), c.memory(), c.memory(), c.mask()).toArray();
    }
}
