package io.github.attn4j.reference;

import io.github.attn4j.RotaryEmbedding;
import io.github.attn4j.Tensor;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * {@link ReferenceAttention#rotary} against angles worked out by hand. With {@code r = 4} the
 * second pair's inverse frequency is {@code theta^(-1/2)}, so {@code theta = (2/π)²} turns it by
 * π/2 per position and {@code theta = (3/π)²} by π/3; the first pair always turns by 1 radian.
 */
class ReferenceRotaryTest {
    private static final double QUARTER_TURN_THETA = 4 / (Math.PI * Math.PI);
    private static final double SIXTH_TURN_THETA = 9 / (Math.PI * Math.PI);
    private static final float COS1 = (float) Math.cos(1), SIN1 = (float) Math.sin(1);

    /** One head vector rotated at one position. */
    private static float[] rotate(RotaryEmbedding rope, int position, float... x) {
        return ReferenceAttention.rotary(Tensor.of(x, 1, 1, 1, x.length), new int[][]{{position}}, rope).toArray();
    }

    private static float[] unit(int d, int i) {
        float[] x = new float[d];
        x[i] = 1;
        return x;
    }

    @Test
    void rotateHalfPairsDimIWithDimIPlusHalf() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, QUARTER_TURN_THETA);
        // Pair 1 is (dim 1, dim 3), turned by π/2 at position 1: (1, 0) -> (0, 1) and (0, 1) -> (-1, 0).
        assertArrayEquals(new float[]{0, 0, 0, 1}, rotate(rope, 1, unit(4, 1)), 1e-7f);
        assertArrayEquals(new float[]{0, -1, 0, 0}, rotate(rope, 1, unit(4, 3)), 1e-7f);
        // At position 2 by π: (1, 0) -> (-1, 0).
        assertArrayEquals(new float[]{0, -1, 0, 0}, rotate(rope, 2, unit(4, 1)), 1e-7f);
        // Pair 0 is (dim 0, dim 2), inverse frequency theta^0 = 1: 1 radian at position 1.
        assertArrayEquals(new float[]{COS1, 0, SIN1, 0}, rotate(rope, 1, unit(4, 0)), 1e-7f);
        // Position 0 is the identity.
        assertArrayEquals(new float[]{1, 2, 3, 4}, rotate(rope, 0, 1, 2, 3, 4), 0f);
    }

    @Test
    void interleavedPairsNeighbours() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, SIXTH_TURN_THETA).interleaved();
        float half = 0.5f, halfRoot3 = (float) (Math.sqrt(3) / 2);
        // Pair 1 is (dim 2, dim 3), turned by π/3 at position 1.
        assertArrayEquals(new float[]{0, 0, half, halfRoot3}, rotate(rope, 1, unit(4, 2)), 1e-7f);
        assertArrayEquals(new float[]{0, 0, -halfRoot3, half}, rotate(rope, 1, unit(4, 3)), 1e-7f);
        // By π at position 3.
        assertArrayEquals(new float[]{0, 0, -1, 0}, rotate(rope, 3, unit(4, 2)), 1e-6f);
        // Pair 0 is (dim 0, dim 1), 1 radian at position 1.
        assertArrayEquals(new float[]{COS1, SIN1, 0, 0}, rotate(rope, 1, unit(4, 0)), 1e-7f);
    }

    @Test
    void partialRotaryDimLeavesTheTailUntouched() {
        // r = 4 of d = 8: pairs (0, 2) and (1, 3) (half of r, not of d); dims 4..7 pass through exactly.
        RotaryEmbedding rope = RotaryEmbedding.of(4, QUARTER_TURN_THETA);
        assertArrayEquals(new float[]{0, 0, 0, 1, 5, 6, 7, 8}, rotate(rope, 1, 0, 1, 0, 0, 5, 6, 7, 8), 1e-7f);
        float[] tail = rotate(rope.interleaved(), 7, 0.3f, -1, 2, 4, 5.5f, -6, 7e-3f, 8e9f);
        assertArrayEquals(new float[]{5.5f, -6, 7e-3f, 8e9f}, java.util.Arrays.copyOfRange(tail, 4, 8), 0f);
    }

    @Test
    void linearScalingDividesThePosition() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, QUARTER_TURN_THETA).linearScaling(2);
        // Position 2 / 2 = 1: pair 1 by π/2.
        assertArrayEquals(new float[]{0, 0, 0, 1}, rotate(rope, 2, unit(4, 1)), 1e-7f);
        // Position 1 / 2: pair 1 by π/4, pair 0 by 1/2 radian.
        float r = (float) (Math.sqrt(2) / 2);
        assertArrayEquals(new float[]{0, r, 0, r}, rotate(rope, 1, unit(4, 1)), 1e-7f);
        assertArrayEquals(new float[]{(float) Math.cos(0.5), 0, (float) Math.sin(0.5), 0}, rotate(rope, 1, unit(4, 0)), 1e-7f);
    }

    /**
     * theta = 10⁴, r = 8: invFreq = 1, 0.1, 0.01, 0.001, wavelengths 2π·(1, 10, 100, 1000). With
     * original length 1000, low 1, high 4: low wavelength 1000, high 250. Pairs 0 and 1 are below
     * 250 (kept), pair 3 above 1000 (divided by 8), pair 2 (628.3) in between:
     * smooth = (1000 / 200π - 1) / 3 = (5/π - 1) / 3 = 0.19718314, invFreq = 0.01 · ((1 - smooth)/8
     * + smooth) = 0.0029753525.
     */
    @Test
    void llama3ScalingKeepsHighDividesLowAndSmoothsTheMiddle() {
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10_000).llama3Scaling(8, 1, 4, 1000);
        assertArrayEquals(new double[]{1, 0.1, 0.0029753525068, 0.000125}, ReferenceDecoder.inverseFrequencies(rope), 1e-12);
        // Through rotary (rotate_half: pair i is (i, i + 4)): angles position · invFreq.
        assertArrayEquals(rotatedPair(0, 4, 1), rotate(rope, 1, unit(8, 0)), 1e-7f);              // 1 · 1
        assertArrayEquals(rotatedPair(1, 5, 1), rotate(rope, 10, unit(8, 1)), 1e-6f);             // 10 · 0.1
        assertArrayEquals(rotatedPair(3, 7, 1), rotate(rope, 8000, unit(8, 3)), 1e-5f);           // 8000 · 0.001 / 8
        assertArrayEquals(rotatedPair(2, 6, 0.29753525068), rotate(rope, 100, unit(8, 2)), 1e-6f); // 100 · 0.0029753525
    }

    /** Unit vector of dim {@code a} turned by {@code angle} towards dim {@code b}, in 8 dims. */
    private static float[] rotatedPair(int a, int b, double angle) {
        float[] y = new float[8];
        y[a] = (float) Math.cos(angle);
        y[b] = (float) Math.sin(angle);
        return y;
    }

    @Test
    void yarnKeepsHighDividesLowRampsTheMiddleAndScales() {
        // r = 8, theta 10000, factor 4, 1000 original positions, betaFast 32, betaSlow 1, by hand:
        // dim(n) = 8 ln(1000 / (2π n)) / (2 ln 10000): low = dim(32) = 0.696670153321979,
        // high = dim(1) = 2.2018201316418846; ramp_i = clamp((i - low) / (high - low), 0, 1) =
        // 0, 0.20152798793951884, 0.8659136069169915, 1; invFreq_i = 10000^(-i/4) · (ramp/4 + 1 - ramp)
        // = 1, 0.0848854009045361, 0.0035056479481225633, 0.00025; attention factor 0.1 ln 4 + 1.
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10_000).yarnScaling(4, 1000, 32, 1, false);
        double[] invFreq = {1, 0.0848854009045361, 0.0035056479481225633, 0.00025};
        double m = 1.138629436111989;
        int p = 37;
        for (int i = 0; i < 4; i++) {
            float[] e = new float[8];
            e[i] = 1;
            float[] y = ReferenceAttention.rotary(Tensor.of(e, 1, 1, 1, 8), new int[][] {{p}}, rope).toArray();
            double a = p * invFreq[i];
            assertEquals(m * Math.cos(a), y[i], 1e-7, "pair " + i + " cos");
            assertEquals(m * Math.sin(a), y[i + 4], 1e-7, "pair " + i + " sin");
        }
    }

    private static RotaryEmbedding anyRope(SplittableRandom r, int d) {
        int rotaryDim = 2 * (1 + r.nextInt(d / 2));
        RotaryEmbedding rope = RotaryEmbedding.of(rotaryDim, r.nextDouble(2, 1e6));
        rope = r.nextBoolean() ? rope.interleaved() : rope;
        return switch (r.nextInt(4)) {
            case 0 -> rope;
            case 1 -> rope.linearScaling(r.nextDouble(0.5, 8));
            case 2 -> rope.llama3Scaling(r.nextDouble(1, 16), 1, 4, 1 + r.nextInt(10_000));
            default -> rope.yarnScaling(r.nextDouble(0.5, 40), 1 + r.nextInt(10_000), r.nextDouble(2, 64), r.nextDouble(0.5, 2),
                    r.nextBoolean());
        };
    }

    @Test
    void rotationPreservesEveryPairsNorm() {
        qt().withExamples(200).forAll(integers().between(1, 8), longs().all()).checkAssert((halfD, seed) -> {
            SplittableRandom r = new SplittableRandom(seed);
            int d = 2 * halfD;
            RotaryEmbedding rope = anyRope(r, d);
            float[] x = new float[d];
            for (int c = 0; c < d; c++) {
                x[c] = (float) r.nextDouble(-2, 2);
            }
            float[] y = rotate(rope, r.nextInt(100_000), x);
            int half = rope.rotaryDim() / 2;
            // YaRN also multiplies each rotated pair by its attention factor
            double m = rope.yarn() == null ? 1 : rope.yarn().attentionFactor();
            for (int i = 0; i < half; i++) {
                int a = rope.isInterleaved() ? 2 * i : i, b = rope.isInterleaved() ? 2 * i + 1 : i + half;
                assertEquals(m * m * (x[a] * x[a] + x[b] * x[b]), y[a] * y[a] + y[b] * y[b], 1e-5, "pair " + i + " of " + rope);
            }
            for (int c = rope.rotaryDim(); c < d; c++) {
                assertEquals(x[c], y[c], 0f, "tail dim " + c);
            }
        });
    }

    @Test
    void scoresDependOnlyOnThePositionDifference() {
        qt().withExamples(200).forAll(integers().between(1, 8), longs().all()).checkAssert((halfD, seed) -> {
            SplittableRandom r = new SplittableRandom(seed);
            int d = 2 * halfD;
            RotaryEmbedding rope = anyRope(r, d);
            float[] q = new float[d], k = new float[d];
            for (int c = 0; c < d; c++) {
                q[c] = (float) r.nextDouble(-1, 1);
                k[c] = (float) r.nextDouble(-1, 1);
            }
            int m = r.nextInt(64), n = r.nextInt(64), shift = r.nextInt(64);
            double near = dot(rotate(rope, m, q), rotate(rope, n, k));
            double shifted = dot(rotate(rope, m + shift, q), rotate(rope, n + shift, k));
            assertEquals(near, shifted, 1e-5, "q·k at (" + m + ", " + n + ") vs shifted by " + shift + " with " + rope);
        });
    }

    private static double dot(float[] a, float[] b) {
        double s = 0;
        for (int c = 0; c < a.length; c++) {
            s += (double) a[c] * b[c];
        }
        return s;
    }

    @Test
    void everyTokenUsesItsOwnPosition() {
        // x (B=2, H=1, L=2, d=2): batch 0 at positions 0, 1; batch 1 at 3, 2 (r = 2: 1 radian per position).
        RotaryEmbedding rope = RotaryEmbedding.of(2, 10_000);
        Tensor x = Tensor.of(new float[]{1, 0, 1, 0, 1, 0, 1, 0}, 2, 1, 2, 2);
        float[] y = ReferenceAttention.rotary(x, new int[][]{{0, 1}, {3, 2}}, rope).toArray();
        float[] expected = {1, 0, COS1, SIN1, (float) Math.cos(3), (float) Math.sin(3), (float) Math.cos(2), (float) Math.sin(2)};
        assertArrayEquals(expected, y, 1e-7f);
        assertArrayEquals(new float[]{1, 0, 1, 0, 1, 0, 1, 0}, x.toArray(), 0f, "the input is not changed");
    }

    @Test
    void rejectsBadArguments() {
        Tensor x = Tensor.zeros(1, 2, 3, 4);
        RotaryEmbedding rope = RotaryEmbedding.of(4, 10_000);
        int[][] positions = {{0, 1, 2}};
        assertThrows(NullPointerException.class, () -> ReferenceAttention.rotary(null, positions, rope));
        assertThrows(NullPointerException.class, () -> ReferenceAttention.rotary(x, null, rope));
        assertThrows(NullPointerException.class, () -> ReferenceAttention.rotary(x, positions, null));
        assertMessage("x: expected rank 4", () -> ReferenceAttention.rotary(Tensor.zeros(2, 4), positions, rope));
        assertMessage("positions: expected 1 rows (B), got 2 rows",
                () -> ReferenceAttention.rotary(x, new int[][]{{0, 1, 2}, {0, 1, 2}}, rope));
        assertMessage("positions[0]: expected length 3 (L), got length 2", () -> ReferenceAttention.rotary(x, new int[][]{{0, 1}}, rope));
        assertMessage("positions[0][1]: expected a non-negative position, got -1",
                () -> ReferenceAttention.rotary(x, new int[][]{{0, -1, 2}}, rope));
        assertMessage("rope.rotaryDim: expected a positive even value <= head width 4, got 6",
                () -> ReferenceAttention.rotary(x, positions, RotaryEmbedding.of(6, 10_000)));
        // Configurations RotaryEmbedding itself may come to reject: either check throws.
        assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.rotary(x, positions, RotaryEmbedding.of(4, Double.NaN)));
        assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.rotary(x, positions, rope.linearScaling(0)));
        assertThrows(IllegalArgumentException.class, () -> ReferenceAttention.rotary(x, positions, rope.llama3Scaling(8, 4, 1, 8192)));
    }

    private static void assertMessage(String prefix, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(prefix), e.getMessage());
    }
}
