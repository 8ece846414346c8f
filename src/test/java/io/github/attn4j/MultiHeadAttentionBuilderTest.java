package io.github.attn4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Validation of the builder options and of the forwardCached arguments: each failure names the argument, the expected and the actual value. */
class MultiHeadAttentionBuilderTest {
    private static final float[] HD = new float[8];

    private static MultiHeadAttentionBuilder builder() {
        return MultiHeadAttention.builder(16, 2).seed(1);   // headDim 8
    }

    private static void assertRejected(Executable call, String... parts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(parts[0] + ": expected"), e.getMessage());
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), e.getMessage() + " should mention " + part);
        }
    }

    private static void assertNullRejected(Executable call, String name) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertTrue(e.getMessage().startsWith(name), e.getMessage());
    }

    @Test
    void softcapMustBeFiniteAndPositive() {
        assertRejected(() -> builder().softcap(0f), "softcap", "a finite positive value", "got 0.0");
        assertRejected(() -> builder().softcap(-1f), "softcap", "got -1.0");
        assertRejected(() -> builder().softcap(Float.NaN), "softcap", "got NaN");
        assertRejected(() -> builder().softcap(Float.POSITIVE_INFINITY), "softcap", "got Infinity");
    }

    @Test
    void sinksNeedOneFiniteLogitPerQueryHead() {
        assertNullRejected(() -> builder().sinks(null), "sinks");
        assertRejected(() -> builder().sinks(new float[3]).build(), "sinks", "length 2", "got 3");
        assertRejected(() -> builder().sinks(new float[]{0f, Float.NaN}).build(), "sinks[1]", "a finite value", "got NaN");
        assertRejected(() -> builder().sinks(new float[]{Float.NEGATIVE_INFINITY, 0f}).build(), "sinks[0]", "got -Infinity");
    }

    @Test
    void qkNormNeedsHeadDimWeightsAndAValidEpsilon() {
        assertNullRejected(() -> builder().qkNorm(null, HD, 1e-6f), "qWeight");
        assertNullRejected(() -> builder().qkNorm(HD, null, 1e-6f), "kWeight");
        assertRejected(() -> builder().qkNorm(HD, HD, -1e-6f), "eps", "non-negative", "got -1.0E-6");
        assertRejected(() -> builder().qkNorm(HD, HD, Float.NaN), "eps", "got NaN");
        assertRejected(() -> builder().qkNorm(new float[4], new float[4], 1e-6f).build(), "qWeight", "headDim = 8", "got length 4");
        assertRejected(() -> builder().qkNorm(HD, new float[7], 1e-6f).build(), "kWeight", "got length 7");
    }

    @Test
    void rotaryMustFitTheHeadWidth() {
        assertNullRejected(() -> builder().rotary(null), "rope");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder().rotary(RotaryEmbedding.of(16, 10000)).build());
        assertTrue(e.getMessage().startsWith("rotaryDim") && e.getMessage().contains("16"), e.getMessage());
    }

    @Test
    void biasesAreCheckedOneByOne() {
        assertRejected(() -> builder().biases(null, new float[7], null, null).build(), "bk", "length 16", "got 7");
        assertRejected(() -> builder().kvHeads(1).biases(new float[16], new float[16], null, null).build(),
                "bk", "length 8", "got 16");
        assertRejected(() -> builder().biases(null, null, null, new float[15]).build(), "bo", "length 16", "got 15");
        assertRejected(() -> builder().bias(false).biases(null, null, new float[16], null).build(), "biases",
                "no biases when bias(false) is set");
        builder().bias(false).biases(null, null, null, null).build();
    }

    @Test
    void optionArraysAreCopiedAtBuild() {
        SplittableRandom random = new SplittableRandom(2);
        float[] sinks = {0.5f, -1f}, qNorm = MultiHeadAttentionCachedTest.normWeights(random, 8);
        float[] kNorm = MultiHeadAttentionCachedTest.normWeights(random, 8), bq = RandomTensors.uniformArray(random, 16);
        MultiHeadAttention m = builder().sinks(sinks).qkNorm(qNorm, kNorm, 1e-5f).biases(bq, null, null, null).build();
        Tensor x = uniform(random, 1, 5, 16);
        float[] before = m.forward(x, AttentionMask.causal()).toArray();
        Arrays.fill(sinks, 9f);
        Arrays.fill(qNorm, 9f);
        Arrays.fill(kNorm, 9f);
        Arrays.fill(bq, 9f);
        assertArrayEquals(before, m.forward(x, AttentionMask.causal()).toArray(), 0f);
    }

    @Test
    void forwardCachedRejectsBadTokenCountsMasksAndCaches() {
        MultiHeadAttention m = builder().kvHeads(1).build();
        KvCache cache = m.newKvCache(2, 4);
        Tensor x = Tensor.zeros(2, 3, 16);
        assertNullRejected(() -> m.forwardCached(x, cache, AttentionMask.none(), null), "tokens");
        assertNullRejected(() -> m.forwardCached(x, cache, null), "mask");
        assertRejected(() -> m.forwardCached(x, cache, AttentionMask.none(), new int[]{1}), "tokens", "2", "length 1");
        assertRejected(() -> m.forwardCached(x, cache, AttentionMask.none(), new int[]{1, 4}), "tokens[1]", "[0, T = 3]", "got 4");
        assertRejected(() -> m.forwardCached(x, cache, AttentionMask.none(), new int[]{-1, 0}), "tokens[0]", "got -1");
        assertRejected(() -> m.forwardCached(x, cache, AttentionMask.keyPadding(new boolean[2][5])), "mask.keyPadding", "3 keys");
        assertRejected(() -> m.forwardCached(x, KvCache.create(2, 2, 8, 4)), "cache", "kvHeads = 1 and headDim = 8",
                "got kvHeads = 2 and headDim = 8");
        assertRejected(() -> m.forwardCached(x, KvCache.create(2, 1, 4, 4)), "cache", "got kvHeads = 1 and headDim = 4");
        assertRejected(() -> m.forwardCached(x, builder().kvHeads(1).build().newKvCache(2, 4)), "cache", "a cache of another module");
        // Nothing was appended by the rejected calls.
        assertTrue(cache.length() == 0, "length " + cache.length());
    }
}
