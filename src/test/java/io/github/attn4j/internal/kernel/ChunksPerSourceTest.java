package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How the attention kernel shares out its work: sources of several query tiles, values worked out
 * by hand from the rule, and calls too small for more than the calling thread.
 */
class ChunksPerSourceTest {
    @Test
    void oneThreadTakesEachSourceWhole() {
        assertEquals(1, AttentionKernel.chunksPerSource(1, 1, 2));
        assertEquals(1, AttentionKernel.chunksPerSource(7, 1, 40));
    }

    @Test
    void sourcesThatKeepEveryThreadBusyStayWhole() {
        assertEquals(1, AttentionKernel.chunksPerSource(8, 2, 11));     // 4 per thread
        assertEquals(1, AttentionKernel.chunksPerSource(12, 4, 3));
        assertEquals(1, AttentionKernel.chunksPerSource(33, 2, 3));     // 16 per thread and more
        assertEquals(1, AttentionKernel.chunksPerSource(129, 8, 2));
    }

    @Test
    void fewSourcesAreCutIntoChunksOfAtLeastFourTiles() {
        assertEquals(2, AttentionKernel.chunksPerSource(1, 2, 8));      // 2 tasks on 2 threads
        assertEquals(2, AttentionKernel.chunksPerSource(3, 2, 11));     // 6 tasks on 2 threads
        assertEquals(2, AttentionKernel.chunksPerSource(6, 4, 43));     // 12 tasks on 4 threads
    }

    @Test
    void longSourcesAreCutIntoChunksOfAtMost32Tiles() {
        assertEquals(4, AttentionKernel.chunksPerSource(8, 2, 171));    // 8 heads at L = 8192: 32 tasks
        assertEquals(2, AttentionKernel.chunksPerSource(8, 2, 43));     // L = 2048: 16 chunks of 21 or 22 tiles
        assertEquals(2, AttentionKernel.chunksPerSource(2, 2, 64));     // 4 chunks of 32 tiles
        assertEquals(4, AttentionKernel.chunksPerSource(1, 2, 100));    // 3 would be odd; 4 of 25 tiles
        assertEquals(1, AttentionKernel.chunksPerSource(8, 2, 32));     // 32 tiles: whole sources
    }

    @Test
    void chunksTooShortMeanPackingFirst() {
        assertEquals(0, AttentionKernel.chunksPerSource(1, 2, 7));      // 2 chunks would have 3 or 4 tiles
        assertEquals(0, AttentionKernel.chunksPerSource(3, 2, 3));
        assertEquals(0, AttentionKernel.chunksPerSource(1, 8, 20));     // 8 chunks of 2 or 3 tiles
        assertEquals(0, AttentionKernel.chunksPerSource(5, 2, 1));      // one query tile: split keys instead
    }

    @Test
    void callsBelowTheSplitWorkRunOnTheCallingThread() {
        long bound = AttentionKernel.MIN_SPLIT_WORK;
        if (bound > 0) {
            assertEquals(1, AttentionKernel.worthThreads(bound - 1, 4));
            assertEquals(1, AttentionKernel.worthThreads(0, 2));
        }
        assertEquals(4, AttentionKernel.worthThreads(bound, 4));
        assertEquals(2, AttentionKernel.worthThreads(Math.max(bound, 1) * 1e9, 2));
        assertEquals(1, AttentionKernel.worthThreads(Math.max(bound, 1) * 1e9, 1));
    }
}
