package io.github.attn4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * RoPE against hand-derived angles and an independent double-precision rotation.
 *
 * <p>Tolerances: cos and sin are rounded to float once (relative error u = 2⁻²⁴ each) and each
 * output {@code fma(x, c, −y·s)} rounds twice more, so an output is within
 * {@code u·(2|x| + 3|y|) ≤ 3u·(|x| + |y|)} of the exact rotation of the pair {@code (x, y)}; the
 * double angle {@code a} adds at most a few {@code 2⁻⁵³·a} radians.
 */
class RotaryEmbeddingTest {
    private static final double U = Math.ulp(1f) / 2;

    // ---- hand-derived angles ----

    /**
     * theta = 36/π² makes pair 1 of a rotaryDim-4 head turn by invFreq_1 = theta^(-1/2) = π/6 per
     * position, so the angles are exact fractions of π; pair 0 turns by 1 radian per position.
     */
    private static final double THETA_PI_6 = 36 / (Math.PI * Math.PI);
    private static final int[] POSITIONS = {0, 1, 2, 3, 4, 6, 9, 12};
    /** cos and sin of p·π/6 for the positions above, by hand. */
    private static final double S3 = Math.sqrt(3) / 2;
    private static final double[] COS_PI_6 = {1, S3, 0.5, 0, -0.5, -1, 0, 1};
    private static final double[] SIN_PI_6 = {0, 0.5, S3, 1, S3, 0, -1, 0};

    @Test
    void rotateHalfTurnsUnitVectorsByKnownAngles() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, THETA_PI_6);
        // pair 1 is dims (1, 3): e1 -> (cos, sin), e3 -> (-sin, cos); pair 0 is dims (0, 2)
        checkUnitVectors(rope, 1, 3, COS_PI_6, SIN_PI_6);
        checkUnitVectors(rope, 0, 2, cosOf(POSITIONS), sinOf(POSITIONS));
    }

    @Test
    void interleavedTurnsUnitVectorsByKnownAngles() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, THETA_PI_6).interleaved();
        // pair 1 is dims (2, 3), pair 0 dims (0, 1)
        checkUnitVectors(rope, 2, 3, COS_PI_6, SIN_PI_6);
        checkUnitVectors(rope, 0, 1, cosOf(POSITIONS), sinOf(POSITIONS));
    }

    /** e_x and e_y at each position of {@link #POSITIONS}; the other dims must stay 0. */
    private static void checkUnitVectors(RotaryEmbedding rope, int dx, int dy, double[] cos, double[] sin) {
        int n = POSITIONS.length;
        float[] ex = new float[2 * n * 4];
        for (int t = 0; t < n; t++) {
            ex[t * 4 + dx] = 1;
            ex[(n + t) * 4 + dy] = 1;
        }
        int[] pos = new int[2 * n];
        for (int t = 0; t < n; t++) {
            pos[t] = POSITIONS[t];
            pos[n + t] = POSITIONS[t];
        }
        float[] out = rope.apply(Tensor.of(ex, 1, 1, 2 * n, 4), new int[][] {pos}).toArray();
        double tol = 2 * U; // one rounding of cos/sin to float (the products with 1 and 0 are exact)
        for (int t = 0; t < n; t++) {
            float[] x = Arrays.copyOfRange(out, t * 4, t * 4 + 4);
            float[] y = Arrays.copyOfRange(out, (n + t) * 4, (n + t) * 4 + 4);
            String at = rope + " position " + POSITIONS[t];
            double[] expectX = new double[4], expectY = new double[4];
            expectX[dx] = cos[t];
            expectX[dy] = sin[t];
            expectY[dx] = -sin[t];
            expectY[dy] = cos[t];
            assertClose(expectX, x, tol, at + " e" + dx);
            assertClose(expectY, y, tol, at + " e" + dy);
        }
    }

    private static double[] cosOf(int[] radians) {
        return Arrays.stream(radians).mapToDouble(Math::cos).toArray();
    }

    private static double[] sinOf(int[] radians) {
        return Arrays.stream(radians).mapToDouble(Math::sin).toArray();
    }

    // ---- structural properties ----

    @Test
    void partialRotaryLeavesTheTailBitIdentical() {
        SplittableRandom random = new SplittableRandom(1);
        Tensor x = RandomTensors.uniform(random, 2, 3, 5, 10);
        int[][] positions = {{0, 1, 2, 3, 4}, {7, 100, 1000, 2, 2}};
        for (RotaryEmbedding rope : new RotaryEmbedding[] {RotaryEmbedding.of(4, 10000), RotaryEmbedding.of(4, 10000).interleaved()}) {
            float[] in = x.toArray(), out = rope.apply(x, positions).toArray();
            for (int row = 0; row < in.length / 10; row++) {
                for (int c = 4; c < 10; c++) {
                    assertEquals(in[row * 10 + c], out[row * 10 + c], rope + " row " + row + " dim " + c);
                }
            }
            assertFalse(Arrays.equals(in, out), "the rotated dims change");
        }
    }

    @Test
    void everyPairKeepsItsNorm() {
        SplittableRandom random = new SplittableRandom(2);
        Tensor x = RandomTensors.uniform(random, 1, 2, 6, 12);
        int[][] positions = {{0, 1, 17, 4096, 65535, 1 << 20}};
        for (RotaryEmbedding rope : new RotaryEmbedding[] {RotaryEmbedding.of(12, 10000), RotaryEmbedding.of(12, 500000).interleaved()}) {
            float[] in = x.toArray(), out = rope.apply(x, positions).toArray();
            for (int row = 0; row < in.length / 12; row++) {
                for (int i = 0; i < 6; i++) {
                    int a = row * 12 + pairX(rope, i), b = row * 12 + pairY(rope, i);
                    double before = Math.hypot(in[a], in[b]), after = Math.hypot(out[a], out[b]);
                    // each output within 3u(|x|+|y|) of the exact rotation, whose norm is exact
                    double tol = 2 * 3 * U * (Math.abs(in[a]) + Math.abs(in[b]));
                    assertEquals(before, after, tol, rope + " row " + row + " pair " + i);
                }
            }
        }
    }

    @Test
    void scoresDependOnlyOnTheRelativePosition() {
        SplittableRandom random = new SplittableRandom(3);
        int d = 16;
        float[] q = RandomTensors.uniform(random, d).toArray(), k = RandomTensors.uniform(random, d).toArray();
        for (RotaryEmbedding rope : new RotaryEmbedding[] {RotaryEmbedding.of(d, 10000), RotaryEmbedding.of(d, 10000).interleaved()}) {
            // per pair the output errors are at most 3u(|x|+|y|) and |x'|,|y'| <= |x|+|y|, so a
            // score is within 2·2·3u·Σ(|qx|+|qy|)(|kx|+|ky|) of exact; two scores twice that
            double tol = 0;
            for (int i = 0; i < d / 2; i++) {
                int a = pairX(rope, i), b = pairY(rope, i);
                tol += 24 * U * (Math.abs(q[a]) + Math.abs(q[b])) * (Math.abs(k[a]) + Math.abs(k[b]));
            }
            for (int offset : new int[] {3, -40}) {
                int base = Math.max(0, -offset);
                double reference = score(rope, q, base + offset, k, base);
                for (int p : new int[] {base + 1, base + 100, base + 5000}) {
                    assertEquals(reference, score(rope, q, p + offset, k, p), tol, rope + " offset " + offset + " at key position " + p);
                }
            }
            assertNotEquals(score(rope, q, 3, k, 0), score(rope, q, 40, k, 0), 1e-3, "different offsets give different scores");
        }
    }

    private static double score(RotaryEmbedding rope, float[] q, int qPos, float[] k, int kPos) {
        int d = q.length;
        float[] both = new float[2 * d];
        System.arraycopy(q, 0, both, 0, d);
        System.arraycopy(k, 0, both, d, d);
        float[] r = rope.apply(Tensor.of(both, 1, 1, 2, d), new int[][] {{qPos, kPos}}).toArray();
        double s = 0;
        for (int c = 0; c < d; c++) {
            s += (double) r[c] * r[d + c];
        }
        return s;
    }

    // ---- apply() ----

    @Test
    void applyLeavesItsInputUnchanged() {
        float[] data = RandomTensors.uniform(new SplittableRandom(7), 2 * 3 * 4 * 8).toArray();
        float[] before = data.clone();
        Tensor x = Tensor.of(data, 2, 3, 4, 8);
        Tensor y = RotaryEmbedding.of(8, 10000).apply(x, new int[][] {{0, 1, 2, 3}, {5, 6, 7, 8}});
        assertArrayEquals(before, data);
        assertArrayEquals(new int[] {2, 3, 4, 8}, y.shape());
        assertFalse(Arrays.equals(before, y.toArray()));
    }

    @Test
    void emptyTensorsPassThrough() {
        RotaryEmbedding rope = RotaryEmbedding.of(4, 10000);
        assertArrayEquals(new int[] {1, 2, 0, 4}, rope.apply(Tensor.zeros(1, 2, 0, 4), new int[][] {{}}).shape());
        assertArrayEquals(new int[] {0, 2, 3, 4}, rope.apply(Tensor.zeros(0, 2, 3, 4), new int[0][]).shape());
        assertArrayEquals(new int[] {1, 0, 1, 4}, rope.apply(Tensor.zeros(1, 0, 1, 4), new int[][] {{0}}).shape());
    }

    @Test
    void farApartAndRepeatedPositions() {
        // the span of positions exceeds the token count: the table holds only the distinct ones
        Tensor x = RandomTensors.uniform(new SplittableRandom(8), 3, 2, 3, 6);
        int[][] positions = {{0, 1_000_000, 7}, {7, 7, 2_000_000_000}, {1_000_000, 0, 3}};
        for (RotaryEmbedding rope : new RotaryEmbedding[] {RotaryEmbedding.of(6, 10000), RotaryEmbedding.of(4, 10000).interleaved()}) {
            double[][] at = new double[3][3];
            for (int b = 0; b < 3; b++) {
                for (int t = 0; t < 3; t++) {
                    at[b][t] = positions[b][t];
                }
            }
            assertRotation(x.toArray(), rope.apply(x, positions).toArray(), 3, 2, 3, 6, at, rope.rotaryDim(), 10000,
                    rope.isInterleaved(), rope.toString());
        }
    }

    // ---- validation ----

    @Test
    void rejectsBadConfiguration() {
        for (int r : new int[] {3, 1, 0, -2}) {
            rejects("rotaryDim", () -> RotaryEmbedding.of(r, 10000));
        }
        for (double theta : new double[] {Double.NaN, Double.POSITIVE_INFINITY, 0, -10000, -0.5}) {
            rejects("theta", () -> RotaryEmbedding.of(8, theta));
        }
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10000);
        for (double f : new double[] {0, -2, Double.NaN, Double.POSITIVE_INFINITY}) {
            rejects("factor", () -> rope.linearScaling(f));
            rejects("factor", () -> rope.llama3Scaling(f, 1, 4, 8192));
            rejects("lowFreqFactor", () -> rope.llama3Scaling(8, f, 4, 8192));
            rejects("highFreqFactor", () -> rope.llama3Scaling(8, 1, f, 8192));
        }
        rejects("highFreqFactor", () -> rope.llama3Scaling(8, 4, 4, 8192));
        rejects("highFreqFactor", () -> rope.llama3Scaling(8, 4, 1, 8192));
        rejects("originalMaxPositions", () -> rope.llama3Scaling(8, 1, 4, 0));
        rejects("originalMaxPositions", () -> new RotaryEmbedding.Llama3Scaling(8, 1, 4, -1));
    }

    @Test
    void rejectsBadApplyArguments() {
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10000);
        Tensor x = Tensor.zeros(2, 3, 4, 8);
        int[][] ok = {{0, 1, 2, 3}, {0, 1, 2, 3}};
        IllegalArgumentException wide = rejects("rotaryDim", () -> RotaryEmbedding.of(10, 10000).apply(x, ok));
        assertEquals("rotaryDim: expected at most headDim = 8, got 10", wide.getMessage());
        rejects("x", () -> rope.apply(Tensor.zeros(3, 4, 8), ok));
        rejects("positions", () -> rope.apply(x, new int[][] {{0, 1, 2, 3}}));
        rejects("positions", () -> rope.apply(x, new int[][] {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}));
        rejects("positions[1]", () -> rope.apply(x, new int[][] {{0, 1, 2, 3}, {0, 1, 2}}));
        IllegalArgumentException negative = rejects("positions[1][2]", () -> rope.apply(x, new int[][] {{0, 1, 2, 3}, {0, 1, -1, 3}}));
        assertEquals("positions[1][2]: expected a non-negative position, got -1", negative.getMessage());
        rejects("positions[0][0]", () -> rope.apply(x, new int[][] {{Integer.MIN_VALUE, 1, 2, 3}, {0, 1, 2, 3}}));
        NullPointerException nullX = assertThrows(NullPointerException.class, () -> rope.apply(null, ok));
        assertTrue(nullX.getMessage().startsWith("x"), nullX.getMessage());
        NullPointerException nullPositions = assertThrows(NullPointerException.class, () -> rope.apply(x, null));
        assertTrue(nullPositions.getMessage().startsWith("positions"), nullPositions.getMessage());
        NullPointerException nullRow = assertThrows(NullPointerException.class, () -> rope.apply(x, new int[][] {{0, 1, 2, 3}, null}));
        assertTrue(nullRow.getMessage().startsWith("positions[1]"), nullRow.getMessage());
    }

    private static IllegalArgumentException rejects(String argument, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(argument + ": expected "), () -> "message '" + e.getMessage() + "' should start with '" + argument + ": expected '");
        return e;
    }

    // ---- value semantics ----

    @Test
    void equalsHashCodeAndToString() {
        RotaryEmbedding a = RotaryEmbedding.of(64, 10000).interleaved().linearScaling(2);
        RotaryEmbedding b = RotaryEmbedding.of(64, 10000).linearScaling(2).interleaved();
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, RotaryEmbedding.of(64, 10000).linearScaling(2));
        assertNotEquals(a, RotaryEmbedding.of(64, 10000).interleaved());
        assertNotEquals(RotaryEmbedding.of(64, 10000), RotaryEmbedding.of(32, 10000));
        assertNotEquals(RotaryEmbedding.of(64, 10000), RotaryEmbedding.of(64, 500000));
        assertEquals(RotaryScalingTest.llama31(), RotaryScalingTest.llama31());
        assertNotEquals(RotaryScalingTest.llama31(), RotaryEmbedding.of(128, 500000).llama3Scaling(8, 1, 4, 4096));
        assertEquals(64, a.rotaryDim());
        assertEquals(10000, a.theta());
        assertEquals("RotaryEmbedding[rotaryDim=64, theta=10000.0, interleaved, linearFactor=2.0]", a.toString());
        assertEquals("RotaryEmbedding[rotaryDim=128, theta=500000.0, rotate_half, Llama3Scaling[factor=8.0, lowFreqFactor=1.0,"
                + " highFreqFactor=4.0, originalMaxPositions=8192]]", RotaryScalingTest.llama31().toString());
    }

    // ---- property: against an independent double-precision rotation ----

    @Test
    void applyMatchesADoublePrecisionRotation() {
        qt().withExamples(300).forAll(longs().all()).checkAssert(RotaryEmbeddingTest::randomCase);
    }

    private static final double[] THETAS = {10000, 500000, 1_000_000, 3.5};

    private static void randomCase(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int batch = 1 + random.nextInt(3), heads = 1 + random.nextInt(4), length = 1 + random.nextInt(24);
        int rotaryDim = 2 * (1 + random.nextInt(20));
        int d = rotaryDim + (random.nextBoolean() ? 0 : 1 + random.nextInt(8));
        double theta = random.nextBoolean() ? THETAS[random.nextInt(THETAS.length)] : random.nextDouble(1.5, 1e6);
        boolean interleaved = random.nextBoolean();
        double factor = random.nextInt(3) == 0 ? random.nextDouble(0.5, 40) : 1;
        int[][] positions = new int[batch][length];
        int kind = random.nextInt(3);
        for (int b = 0; b < batch; b++) {
            int start = random.nextInt(1 << 16);
            for (int t = 0; t < length; t++) {
                positions[b][t] = switch (kind) {
                    case 0 -> t;                                // prefill
                    case 1 -> start + t;                        // per-row offsets (decode, left padding)
                    default -> random.nextInt(1 << 20);         // scattered
                };
            }
        }
        RotaryEmbedding rope = RotaryEmbedding.of(rotaryDim, theta);
        if (interleaved) {
            rope = rope.interleaved();
        }
        if (factor != 1) {
            rope = rope.linearScaling(factor);
        }
        Tensor x = RandomTensors.uniform(random, batch, heads, length, d);
        double[][] scaled = new double[batch][length];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                scaled[b][t] = positions[b][t] / factor;
            }
        }
        assertRotation(x.toArray(), rope.apply(x, positions).toArray(), batch, heads, length, d, scaled, rotaryDim, theta,
                interleaved, rope + " B=" + batch + " H=" + heads + " L=" + length + " d=" + d + " positions kind " + kind);
    }

    /**
     * Checks {@code out} against the rotation of {@code in (B, H, L, d)} computed here in double, token
     * {@code t} of batch row {@code b} at the (possibly fractional) position {@code at[b][t]}: each
     * rotated output within {@code 3u(|x| + |y|)} plus the angle's double rounding, the tail bit-identical.
     */
    static void assertRotation(float[] in, float[] out, int batch, int heads, int length, int d, double[][] at,
                                       int rotaryDim, double theta, boolean interleaved, String what) {
        int half = rotaryDim / 2;
        for (int b = 0; b < batch; b++) {
            for (int h = 0; h < heads; h++) {
                for (int t = 0; t < length; t++) {
                    int base = ((b * heads + h) * length + t) * d;
                    for (int i = 0; i < half; i++) {
                        int ix = base + (interleaved ? 2 * i : i), iy = base + (interleaved ? 2 * i + 1 : i + half);
                        double angle = at[b][t] * Math.pow(theta, -2.0 * i / rotaryDim);
                        double c = Math.cos(angle), s = Math.sin(angle);
                        double x = in[ix], y = in[iy];
                        double tol = (Math.abs(x) + Math.abs(y)) * (3 * U + 8 * 0x1p-53 * (1 + Math.abs(angle)));
                        String where = what + " at b=" + b + " h=" + h + " t=" + t + " pair " + i;
                        assertEquals(x * c - y * s, out[ix], tol, where + " x");
                        assertEquals(x * s + y * c, out[iy], tol, where + " y");
                    }
                    for (int c = rotaryDim; c < d; c++) {
                        assertEquals(in[base + c], out[base + c], what + " tail dim " + c);
                    }
                }
            }
        }
    }

    private static int pairX(RotaryEmbedding rope, int i) {
        return rope.isInterleaved() ? 2 * i : i;
    }

    private static int pairY(RotaryEmbedding rope, int i) {
        return rope.isInterleaved() ? 2 * i + 1 : i + rope.rotaryDim() / 2;
    }

    private static void assertClose(double[] expected, float[] actual, double tol, String what) {
        for (int i = 0; i < expected.length; i++) {
            if (!(Math.abs(expected[i] - actual[i]) <= tol)) {
                fail(what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i] + " (tolerance " + tol + ")");
            }
        }
    }
}
