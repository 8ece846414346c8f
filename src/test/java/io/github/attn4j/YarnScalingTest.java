package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RotaryEmbedding#yarnScaling}: gpt-oss's published configuration (head 64, theta 150000,
 * factor 32, 4096 original positions, betaFast 32, betaSlow 1, no truncation) against frequencies
 * and attention factor derived by hand from the YaRN formulas, the truncated ramp, an explicit
 * attention factor, partial rotary, replacement of the other scalings, and argument checks.
 *
 * <p>By hand for gpt-oss, with {@code dim(n) = 64 ln(4096 / (2π n)) / (2 ln 150000)}: the ramp runs
 * from {@code low = dim(32) = 8.092779115512402} to {@code high = dim(1) = 17.39802450158856};
 * the attention factor is {@code 0.1 ln 32 + 1 = 1.3465735902799727}.
 */
class YarnScalingTest {
    private static final double M = 1.3465735902799727;
    /** Each output is one float rounding of {@code m cos a} or {@code m sin a} (|m| < 2): half an ulp of 2. */
    private static final double TOL = Math.ulp(2f) / 2;

    private static RotaryEmbedding gptOss() {
        return RotaryEmbedding.of(64, 150_000).yarnScaling(32, 4096, 32, 1, false);
    }

    /** The rotation of the unit vectors on pair {@code i}'s two dims (rotate_half: i and i + 32), at position p. */
    private static float[] unitPair(RotaryEmbedding rope, int i, int p) {
        float[] e = new float[2 * 64];
        e[i] = 1;
        e[64 + i + 32] = 1;
        return rope.apply(Tensor.of(e, 1, 1, 2, 64), new int[][] {{p, p}}).toArray();
    }

    private static void assertPair(float[] out, int i, double angle, double m, String what) {
        assertEquals(m * Math.cos(angle), out[i], TOL, what + ": e_i -> m cos");
        assertEquals(m * Math.sin(angle), out[i + 32], TOL, what + ": e_i -> m sin");
        assertEquals(-m * Math.sin(angle), out[64 + i], TOL, what + ": e_(i+32) -> -m sin");
        assertEquals(m * Math.cos(angle), out[64 + i + 32], TOL, what + ": e_(i+32) -> m cos");
    }

    @Test
    void defaultAttentionFactorIsATenthOfTheLogOfTheFactorPlusOne() {
        assertEquals(M, RotaryEmbedding.YarnScaling.of(32, 4096, 32, 1, false).attentionFactor(), 1e-15);
        assertEquals(1.1386294361119891, RotaryEmbedding.YarnScaling.of(4, 4096, 32, 1, false).attentionFactor(), 1e-15);
        assertEquals(1.0, RotaryEmbedding.YarnScaling.of(1, 4096, 32, 1, false).attentionFactor());
        assertEquals(1.0, RotaryEmbedding.YarnScaling.of(0.5, 4096, 32, 1, false).attentionFactor());
    }

    @Test
    void keepsTheFrequenciesBelowTheRamp() {
        // pair 0 < low: invFreq 150000^0 = 1, kept; pair 8 < low = 8.09 too: 150000^(-16/64)
        for (int p : new int[] {0, 1, 7, 4096, 100_000}) {
            assertPair(unitPair(gptOss(), 0, p), 0, p, M, "pair 0 at " + p);
            assertPair(unitPair(gptOss(), 8, p), 8, p * Math.pow(150_000, -0.25), M, "pair 8 at " + p);
        }
    }

    @Test
    void dividesTheFrequenciesAboveTheRampByTheFactor() {
        // pair 31 > high: 150000^(-62/64) / 32 = 3.0235114281192144e-07; pair 18 > high = 17.4 too
        for (int p : new int[] {1, 4096, 131_072, 1_000_000}) {
            assertPair(unitPair(gptOss(), 31, p), 31, p * 3.0235114281192144e-07, M, "pair 31 at " + p);
            assertPair(unitPair(gptOss(), 18, p), 18, p * Math.pow(150_000, -36.0 / 64) / 32, M, "pair 18 at " + p);
        }
    }

    @Test
    void rampsThePairsBetween() {
        // pair 12: ramp = (12 - low) / (high - low) = 0.4198944490313112,
        // invFreq = 150000^(-24/64) · (ramp / 32 + 1 - ramp) = 0.006794959489732219
        for (int p : new int[] {1, 1000, 50_000}) {
            assertPair(unitPair(gptOss(), 12, p), 12, p * 0.006794959489732219, M, "pair 12 at " + p);
        }
    }

    @Test
    void truncationRoundsTheRampsEndsOutwards() {
        // truncate: low = floor(8.09) = 8, high = ceil(17.40) = 18; pair 12: ramp 0.4,
        // invFreq = 150000^(-24/64) · (0.4 / 32 + 0.6) = 0.007015713910504387
        RotaryEmbedding rope = RotaryEmbedding.of(64, 150_000).yarnScaling(32, 4096, 32, 1, true);
        assertPair(unitPair(rope, 12, 1000), 12, 1000 * 0.007015713910504387, M, "truncated pair 12");
        // pair 18 now sits at the end of the ramp: divided by 32, as without truncation
        assertPair(unitPair(rope, 18, 1000), 18, 1000 * Math.pow(150_000, -36.0 / 64) / 32, M, "truncated pair 18");
    }

    @Test
    void anExplicitAttentionFactorMultipliesTheRotatedDimsOnly() {
        // Multiplying cos and sin by 2 is exact in double and in float, and so is every step of the
        // rotation, so a factor of 2 gives exactly twice the outputs of a factor of 1. Dims past
        // rotaryDim (48 of 64 rotate) pass through unchanged.
        Tensor x = RandomTensors.uniform(new SplittableRandom(11), 1, 2, 5, 64);
        int[][] positions = {{0, 3, 4095, 4096, 90_000}};
        RotaryEmbedding base = RotaryEmbedding.of(48, 150_000);
        float[] one = base.yarnScaling(new RotaryEmbedding.YarnScaling(32, 4096, 32, 1, false, 1)).apply(x, positions).toArray();
        float[] two = base.yarnScaling(new RotaryEmbedding.YarnScaling(32, 4096, 32, 1, false, 2)).apply(x, positions).toArray();
        float[] in = x.toArray();
        for (int row = 0; row < 10; row++) {
            for (int c = 0; c < 64; c++) {
                int at = row * 64 + c;
                if (c < 48) {
                    assertEquals(2 * one[at], two[at], "row " + row + " dim " + c);
                } else {
                    assertEquals(in[at], two[at], "row " + row + " pass-through dim " + c);
                }
            }
        }
    }

    @Test
    void replacesAndIsReplacedByTheOtherScalings() {
        RotaryEmbedding rope = RotaryEmbedding.of(64, 150_000);
        RotaryEmbedding.YarnScaling yarn = RotaryEmbedding.YarnScaling.of(32, 4096, 32, 1, false);
        RotaryEmbedding fromLlama = rope.llama3Scaling(8, 1, 4, 8192).yarnScaling(32, 4096, 32, 1, false);
        assertNull(fromLlama.llama3());
        assertEquals(yarn, fromLlama.yarn());
        RotaryEmbedding fromLinear = rope.linearScaling(2).yarnScaling(yarn);
        assertEquals(1.0, fromLinear.linearFactor());
        assertEquals(gptOss(), fromLinear);
        assertEquals(gptOss().hashCode(), fromLinear.hashCode());
        assertNull(gptOss().linearScaling(2).yarn());
        assertNull(gptOss().llama3Scaling(8, 1, 4, 8192).yarn());
        assertTrue(gptOss().interleaved().yarn() != null, "the pairing keeps the scaling");
        assertNotEquals(gptOss(), RotaryEmbedding.of(64, 150_000).yarnScaling(32, 4096, 32, 1, true));
        assertTrue(gptOss().toString().contains("YarnScaling"), gptOss().toString());
    }

    @Test
    void rejectsBadParametersNamingThem() {
        RotaryEmbedding rope = RotaryEmbedding.of(64, 150_000);
        for (double bad : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            rejects("factor", () -> rope.yarnScaling(bad, 4096, 32, 1, false));
            rejects("betaSlow", () -> rope.yarnScaling(32, 4096, 32, bad, false));
            rejects("attentionFactor", () -> new RotaryEmbedding.YarnScaling(32, 4096, 32, 1, false, bad));
        }
        rejects("betaFast", () -> rope.yarnScaling(32, 4096, 1, 1, false));
        rejects("betaFast", () -> rope.yarnScaling(32, 4096, 0.5, 1, false));
        rejects("betaFast", () -> rope.yarnScaling(32, 4096, Double.NaN, 1, false));
        rejects("originalMaxPositions", () -> rope.yarnScaling(32, 0, 32, 1, false));
        assertThrows(NullPointerException.class, () -> rope.yarnScaling(null));
    }

    private static void rejects(String name, Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e.getMessage().startsWith(name + ": expected"), e.getMessage());
    }

    @Test
    void interleavedPairsTurnByTheSameFrequencies() {
        float[] e = new float[64];
        e[2 * 12] = 1;
        float[] out = gptOss().interleaved().apply(Tensor.of(e, 1, 1, 1, 64), new int[][] {{1000}}).toArray();
        double a = 1000 * 0.006794959489732219;
        assertEquals(M * Math.cos(a), out[24], TOL);
        assertEquals(M * Math.sin(a), out[25], TOL);
        float[] plainOut = RotaryEmbedding.of(64, 150_000).interleaved().apply(Tensor.of(e, 1, 1, 1, 64), new int[][] {{1000}}).toArray();
        assertTrue(Math.abs(plainOut[24] - out[24]) > 0.1, "YaRN changes pair 12: " + plainOut[24] + " vs " + out[24]);
    }
}
