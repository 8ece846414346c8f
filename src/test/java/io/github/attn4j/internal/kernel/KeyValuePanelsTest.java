package io.github.attn4j.internal.kernel;

import io.github.attn4j.RandomTensors;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.AttentionKernel.BK;
import static io.github.attn4j.internal.kernel.Kernels.NR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Float32 panels hand out, for every tile the kernel may request (an offset that is a multiple
 * of NR, ending at or before the next multiple of BK), the keys and values appended, at the
 * positions {@link KeyValueSource#keys} and {@link KeyValueSource#values} document, zero past
 * {@code dv}, through appends in chunks that grow the arrays from small capacities.
 */
class KeyValuePanelsTest {
    private static final int[] WIDTHS = {1, 8, 16, 40, 64, 128};

    @Test
    void everyTileHoldsTheAppendedKeysAndValues() {
        qt().withExamples(60).forAll(integers().between(1, 700), longs().all()).checkAssert((total, seed) -> {
            SplittableRandom random = new SplittableRandom(seed);
            int d = WIDTHS[random.nextInt(WIDTHS.length)], dv = WIDTHS[random.nextInt(WIDTHS.length)];
            // Now and then a first capacity whose arrays are G1 humongous objects (over half a
            // region of the tests' 2 GiB heap), which start CacheLines.pad elements in.
            KeyValuePanels panels = new KeyValuePanels(d, dv, random.nextInt(5) == 0 ? 8192 : random.nextInt(40));
            float[] k = RandomTensors.uniformArray(random, total * d, 4);
            float[] v = RandomTensors.uniformArray(random, total * dv, 4);
            for (int done = 0; done < total; ) {
                int count = Math.min(total - done, 1 + random.nextInt(200));
                float[] kc = java.util.Arrays.copyOfRange(k, done * d, (done + count) * d);
                float[] vc = java.util.Arrays.copyOfRange(v, done * dv, (done + count) * dv);
                panels.append(HeadLayout.headsMajor(kc, 1, 1, count, d), HeadLayout.headsMajor(vc, 1, 1, count, dv), 0, 0, count);
                done += count;
            }
            assertEquals(total, panels.length());
            assertTrue(panels.capacity() >= total);
            KeyValueSource.Tile tile = new KeyValueSource.Tile();
            for (int j0 = random.nextInt(Math.min(total, BK) / NR + 1) * NR, nk; j0 < total; j0 += nk) {
                nk = Math.min(Math.min(total - j0, BK - j0 % BK), NR * (1 + random.nextInt(BK / NR)));
                panels.keys(j0, nk, tile);
                for (int j = 0; j < nk; j++) {
                    for (int c = 0; c < d; c++) {
                        assertEquals(k[(j0 + j) * d + c], tile.data[tile.offset + j / NR * NR * d + c * NR + j % NR],
                                "key " + (j0 + j) + " depth " + c + " of the tile at " + j0);
                    }
                }
                panels.values(j0, nk, tile);
                for (int j = 0; j < nk; j++) {
                    for (int c = 0; c < panels.dvPad; c++) {
                        assertEquals(c < dv ? v[(j0 + j) * dv + c] : 0f, tile.data[tile.offset + c / NR * tile.stride + j * NR + c % NR],
                                "value " + (j0 + j) + " column " + c + " of the tile at " + j0);
                    }
                }
            }
        });
    }

    @Test
    void theLargestCapacityFitsItsArraysAndOneChunkMoreDoesNot() {
        for (int d : WIDTHS) {
            for (int dv : WIDTHS) {
                int maxArray = 1 << 20;
                int max = KeyValueSource.maxCapacity(d, dv, maxArray);
                int dvPad = Math.max(NR, Kernels.roundUp(dv, NR));
                // Room is kept for a pad of up to a cache line's elements before the panels.
                int room = maxArray - CacheLines.LINE;
                assertTrue(Kernels.roundUp(max, NR) * (long) d <= room && Kernels.roundUp(max, BK) * (long) dvPad <= room,
                        d + "/" + dv + ": " + max);
                int next = max + BK;
                assertTrue(Kernels.roundUp(next, NR) * (long) d > room || Kernels.roundUp(next, BK) * (long) dvPad > room,
                        d + "/" + dv + ": " + max);
            }
        }
    }
}
