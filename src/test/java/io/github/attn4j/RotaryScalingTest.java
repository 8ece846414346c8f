package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RoPE's linear and Llama 3.1 frequency scalings against exact positions, hand-derived
 * frequencies and {@link RotaryEmbeddingTest}'s double-precision rotation (its tolerances);
 * YaRN is in {@link YarnScalingTest}.
 */
class RotaryScalingTest {
    private static final double U = Math.ulp(1f) / 2;

    @Test
    void linearScalingRotatesAtPositionOverFactor() {
        SplittableRandom random = new SplittableRandom(4);
        Tensor x = RandomTensors.uniform(random, 1, 2, 4, 8);
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10000);
        // p / 4 is exact, so the angles, hence the outputs, are the same bits
        assertArrayEquals(rope.apply(x, new int[][] {{0, 1, 2, 3}}).toArray(),
                rope.linearScaling(4).apply(x, new int[][] {{0, 4, 8, 12}}).toArray());
        // 5/2.5, 10/2.5, 15/2.5 are exact too
        assertArrayEquals(rope.interleaved().apply(x, new int[][] {{0, 2, 4, 6}}).toArray(),
                rope.interleaved().linearScaling(2.5).apply(x, new int[][] {{0, 5, 10, 15}}).toArray());
        // odd positions over 2: against the double rotation at the half-integer positions
        int[][] odd = {{1, 3, 7, 1001}};
        float[] out = rope.linearScaling(2).apply(x, odd).toArray();
        RotaryEmbeddingTest.assertRotation(x.toArray(), out, 1, 2, 4, 8, new double[][] {{0.5, 1.5, 3.5, 500.5}}, 8, 10000, false, "linear 2");
    }

    @Test
    void scalingsReplaceEachOther() {
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10000);
        RotaryEmbedding linearThenLlama = rope.linearScaling(2).llama3Scaling(8, 1, 4, 8192);
        assertEquals(1.0, linearThenLlama.linearFactor());
        assertEquals(new RotaryEmbedding.Llama3Scaling(8, 1, 4, 8192), linearThenLlama.llama3());
        RotaryEmbedding llamaThenLinear = rope.llama3Scaling(8, 1, 4, 8192).linearScaling(2);
        assertEquals(2.0, llamaThenLinear.linearFactor());
        assertNull(llamaThenLinear.llama3());
        assertTrue(rope.interleaved().linearScaling(3).isInterleaved(), "scaling keeps the pairing");
        assertEquals(1.0, rope.linearFactor());
        assertNull(rope.llama3());
    }

    /** Llama 3.1 as published: theta 500000, head 128, factor 8, low 1, high 4, 8192 original positions. */
    static RotaryEmbedding llama31() {
        return RotaryEmbedding.of(128, 500000).llama3Scaling(8, 1, 4, 8192);
    }

    @Test
    void llama3KeepsTheHighestFrequency() {
        // pair 0: invFreq 1, wavelength 2π < 8192/4, kept: the same bits as without scaling
        Tensor x = RandomTensors.uniform(new SplittableRandom(5), 1, 2, 4, 128);
        int[][] positions = {{0, 1, 100, 5000}};
        float[] plain = RotaryEmbedding.of(128, 500000).apply(x, positions).toArray();
        float[] scaled = llama31().apply(x, positions).toArray();
        for (int row = 0; row < 8; row++) {
            assertEquals(plain[row * 128], scaled[row * 128], "row " + row + " dim 0");
            assertEquals(plain[row * 128 + 64], scaled[row * 128 + 64], "row " + row + " dim 64");
        }
    }

    @Test
    void llama3DividesTheLowestFrequencyByTheFactor() {
        // pair 63: invFreq 500000^(-126/128) ≈ 2.5e-6, wavelength ≈ 2.5e6 > 8192/1: invFreq / 8.
        // p · (invFreq / 8) and (p / 8) · invFreq round the same real number (8 is a power of 2),
        // so at p = 8m the rotation is bit for bit the unscaled one at m.
        Tensor x = RandomTensors.uniform(new SplittableRandom(6), 1, 1, 4, 128);
        float[] plain = RotaryEmbedding.of(128, 500000).apply(x, new int[][] {{1, 100, 1000, 16000}}).toArray();
        float[] scaled = llama31().apply(x, new int[][] {{8, 800, 8000, 128000}}).toArray();
        for (int row = 0; row < 4; row++) {
            assertEquals(plain[row * 128 + 63], scaled[row * 128 + 63], "row " + row + " dim 63");
            assertEquals(plain[row * 128 + 127], scaled[row * 128 + 127], "row " + row + " dim 127");
        }
    }

    @Test
    void llama3SmoothsAMiddleFrequency() {
        // pair 32, by hand: invFreq = 500000^(-64/128) = 1/sqrt(500000) = 0.001414213562373095,
        // wavelen = 2π/invFreq = 4442.882938158366, between 8192/4 = 2048 and 8192/1 = 8192;
        // smooth = (8192/4442.882938158366 - 1) / (4 - 1) = 0.28128260516325104;
        // invFreq' = (1 - smooth)·invFreq/8 + smooth·invFreq = 0.0005248461609929546.
        double invFreq = 0.0005248461609929546;
        float[] e = new float[2 * 128];
        e[32] = 1;           // pair 32 is dims (32, 96)
        e[128 + 96] = 1;
        int p = 1000;
        float[] out = llama31().apply(Tensor.of(e, 1, 1, 2, 128), new int[][] {{p, p}}).toArray();
        double a = p * invFreq;  // 0.5248 rad; unscaled would be 1.414, over 8 0.177
        double tol = 2 * U + 1e-12;
        assertEquals(Math.cos(a), out[32], tol, "e32 -> cos");
        assertEquals(Math.sin(a), out[96], tol, "e32 -> sin");
        assertEquals(-Math.sin(a), out[128 + 32], tol, "e96 -> -sin");
        assertEquals(Math.cos(a), out[128 + 96], tol, "e96 -> cos");
    }
}
