package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniformArray;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A built module retains one packed copy of its weights and nothing else big: the heap it keeps
 * alive, measured after full collections with the caller's weight arrays still referenced (so
 * they are not counted on either side), is between 0.95 and 1.1 times the bytes of its weights;
 * with the weights stored as BF16 or F16, between 0.45 and 0.55 times their float32 bytes. The
 * lower bounds show that the measurement sees the module at all.
 */
class ModuleMemoryTest {
    @Test
    void aLargeGqaModuleKeepsOnlyItsPackedWeights() {
        assertRetainsAboutItsWeights(2048, 16, 4, 128, 2048, 2048);   // 40 MiB, q/k/v widths panel-aligned
    }

    /**
     * Modules whose packed arrays stay under half the smallest G1 region (512 KiB), so they are
     * not humongous objects, which G1 counts in whole regions: an array of just over 16 MiB holds
     * 17 regions of 1 MiB, a 6% overhead that is the collector's, not the module's.
     */
    @Test
    void smallGqaUnalignedAndCrossAttentionModulesToo() {
        assertRetainsAboutItsWeights(256, 4, 1, 64, 256, 256);   // GQA, aligned: one stacked q|k|v
        assertRetainsAboutItsWeights(252, 4, 2, 63, 252, 252);   // widths off the panel grid: separate q, k, v
        assertRetainsAboutItsWeights(256, 4, 4, 64, 192, 96);    // cross-attention: keyDim, valueDim != E
    }

    /** The small modules again with 16-bit weights: one packed copy of two bytes per weight. */
    @Test
    void sixteenBitWeightsKeepAboutHalfTheBytes() {
        for (Precision p : new Precision[]{Precision.BF16, Precision.F16}) {
            assertRetains(256, 4, 1, 64, 256, 256, p, 0.45, 0.55);
            assertRetains(252, 4, 2, 63, 252, 252, p, 0.45, 0.55);
            assertRetains(256, 4, 4, 64, 192, 96, p, 0.45, 0.55);
        }
    }

    private static void assertRetainsAboutItsWeights(int e, int h, int kvh, int hd, int kdim, int vdim) {
        assertRetains(e, h, kvh, hd, kdim, vdim, Precision.F32, 0.95, 1.1);
    }

    private static void assertRetains(int e, int h, int kvh, int hd, int kdim, int vdim, Precision precision,
                                      double low, double high) {
        SplittableRandom random = new SplittableRandom(e + h + kvh);
        float[] wq = uniformArray(random, h * hd * e, 0.1), wk = uniformArray(random, kvh * hd * kdim, 0.1);
        float[] wv = uniformArray(random, kvh * hd * vdim, 0.1), wo = uniformArray(random, e * h * hd, 0.1);
        long weightBytes = 4L * (wq.length + wk.length + wv.length + wo.length);
        MultiHeadAttentionBuilder builder = MultiHeadAttention.builder(e, h).kvHeads(kvh).headDim(hd)
                .keyDim(kdim).valueDim(vdim).bias(false).weights(wq, wk, wv, wo).weightPrecision(precision);
        builder.build();   // loads and links everything building touches, so none of it is counted below
        long before = retainedHeap();
        MultiHeadAttention module = builder.build();
        long after = retainedHeap();
        Reference.reachabilityFence(module);
        Reference.reachabilityFence(new float[][]{wq, wk, wv, wo});
        double ratio = (double) (after - before) / weightBytes;
        String what = precision + " E=" + e + " H=" + h + " KVH=" + kvh + " hd=" + hd + " kdim=" + kdim + " vdim=" + vdim
                + ": module retains " + (after - before) + " bytes for " + weightBytes + " bytes of weights (x" + ratio + ")";
        assertTrue(ratio <= high, what);
        assertTrue(ratio >= low, what);
    }

    /** Heap in use after full collections: the least of a few, as other threads may allocate in between. */
    private static long retainedHeap() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
