package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both sides of the element limit ({@code Integer.MAX_VALUE - 8}) without allocating gigabytes: a
 * sparse memory-mapped file gives a tensor of exactly the limit, one more element is rejected, and
 * attention whose L x L scores pass the limit still runs as long as nobody asks for the weights.
 */
class LargeTensorTest {
    private static final int LIMIT = Integer.MAX_VALUE - 8;

    @Test
    void aTensorOfExactlyTheLimitIsAcceptedAndOneMoreIsNot() throws Exception {
        Path file = Files.createTempFile("attn4j-large", ".bin");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"); Arena arena = Arena.ofConfined()) {
            long bytes = 4L * LIMIT + 4;
            raf.setLength(bytes);   // sparse: no block is written
            MemorySegment all = raf.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, bytes, arena);
            Tensor atLimit = Tensor.of(all.asSlice(0, 4L * LIMIT), 1, LIMIT);
            assertEquals(LIMIT, atLimit.size());
            assertEquals(0f, atLimit.get(0, LIMIT - 1));
            Tensor reshaped = atLimit.reshape(7, 306783377);
            assertEquals(0f, reshaped.get(6, 306783376));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Tensor.of(all, 2, LIMIT / 2 + 1));
            assertTrue(e.getMessage().startsWith("shape: element count of [2, 1073741820] exceeds the limit of 2147483639"),
                    e.getMessage());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void scoresPastTheLimitRunWithoutWeightsAndAreRejectedWithThem() {
        int n = 46341;   // n * n = 2147488281 > limit
        SplittableRandom random = new SplittableRandom(5);
        Tensor q = uniform(random, 1, 1, n, 1), k = uniform(random, 1, 1, n, 1), v = uniform(random, 1, 1, n, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ScaledDotProductAttention.applyWithWeights(q, k, v, AttentionMask.causal(), 1f));
        assertTrue(e.getMessage().contains("exceeds the limit of 2147483639"), e.getMessage());

        float[] out = ScaledDotProductAttention.apply(q, k, v, AttentionMask.causal(), 1f, 2).toArray();
        float[] qa = q.toArray(), ka = k.toArray(), va = v.toArray();
        for (int i : new int[]{0, 1, 127, 20000, n - 1}) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j <= i; j++) {
                max = Math.max(max, (double) qa[i] * ka[j]);
            }
            double sum = 0, weighted = 0;
            for (int j = 0; j <= i; j++) {
                double w = Math.exp((double) qa[i] * ka[j] - max);
                sum += w;
                weighted += w * va[j];
            }
            assertEquals(weighted / sum, out[i], 4 * Tolerance.EPS * (i + 2), "row " + i);
        }
    }
}
