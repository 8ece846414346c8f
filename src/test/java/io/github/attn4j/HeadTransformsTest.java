package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * QK-norm and RoPE applied in place per head.
 *
 * <p>Tolerances: the norm rounds {@code 1/sqrt(mean + eps)} to float once and then two float
 * products, so an output is within about {@code 3u·|y|} of the exact one (u = 2⁻²⁴; the double sum
 * of squares adds far less); RoPE adds {@code 3u·(|x| + |y|)} per pair (see RotaryEmbeddingTest).
 */
class HeadTransformsTest {
    private static final double U = Math.ulp(1f) / 2;
    private static final float[] W = {1, 0.5f, 2, -1};

    @Test
    void noneIsTheIdentity() {
        HeadTransforms none = HeadTransforms.none();
        assertTrue(none.isIdentity());
        assertNull(none.rotary());
        float[] data = RandomTensors.uniform(new SplittableRandom(1), 2 * 3 * 4).toArray();
        float[] before = data.clone();
        none.applyToQueries(HeadLayout.headsMajor(data, 1, 2, 3, 4), null);
        none.applyToKeys(HeadLayout.headsMajor(data, 1, 2, 3, 4), null);
        assertArrayEquals(before, data);
        none.checkHeadDim(1);
        RotaryEmbedding rope = RotaryEmbedding.of(4, 10000);
        assertFalse(none.withRotary(rope).isIdentity());
        assertSame(rope, none.withRotary(rope).rotary());
        assertFalse(none.withQkNorm(W, W, 0).isIdentity());
        assertTrue(none.isIdentity(), "none() is not changed by the with methods");
    }

    @Test
    void qkNormByHand() {
        float[] k = {9, 9, 9, 9};
        HeadTransforms norm = HeadTransforms.none().withQkNorm(W, k, 0);
        // (3, 4, 0, 0): mean of squares 25/4, rms 2.5 -> (1.2, 1.6, 0, 0) · W = (1.2, 0.8, 0, 0)
        // (2, -2, 2, -2): rms 2 -> (1, -1, 1, -1) · W = (1, -0.5, 2, 1), exactly
        float[] q = {3, 4, 0, 0, 2, -2, 2, -2};
        norm.applyToQueries(HeadLayout.headsMajor(q, 1, 1, 2, 4), null);
        assertEquals(1.2, q[0], 3 * U * 1.2);
        assertEquals(0.8, q[1], 3 * U * 0.8);
        assertEquals(0f, q[2]);
        assertEquals(-0f, q[3]); // 0 · (-1)
        assertArrayEquals(new float[] {1, -0.5f, 2, 1}, new float[] {q[4], q[5], q[6], q[7]});
        // the keys use their own weights: (2, -2, 2, -2) -> (9, -9, 9, -9)
        float[] keys = {2, -2, 2, -2};
        norm.applyToKeys(HeadLayout.headsMajor(keys, 1, 1, 1, 4), null);
        assertArrayEquals(new float[] {9, -9, 9, -9}, keys);
        // eps inside the root: (1, 1, 1, 1) with eps 3: 1/sqrt(1 + 3) = 0.5 -> 0.5 · W, exactly
        float[] ones = {1, 1, 1, 1};
        HeadTransforms.none().withQkNorm(W, W, 3).applyToQueries(HeadLayout.headsMajor(ones, 1, 1, 1, 4), null);
        assertArrayEquals(new float[] {0.5f, 0.25f, 1, -0.5f}, ones);
    }

    @Test
    void qkNormIgnoresTheScaleOfAHead() {
        SplittableRandom random = new SplittableRandom(2);
        int d = 64;
        float[] w = RandomTensors.uniform(random, d).toArray();
        HeadTransforms norm = HeadTransforms.none().withQkNorm(w, w, 0);
        float[] x = RandomTensors.uniform(random, d).toArray();
        float[] y = normalized(norm, x);
        // by 4 every step scales exactly (squares by 16, the root by 4): the same bits
        assertArrayEquals(y, normalized(norm, scaled(x, 4)));
        // by 3.7: x·3.7 rounds once more (u), so within about 4u·|y| (bound 8u + O(u²))
        float[] y37 = normalized(norm, scaled(x, 3.7f));
        for (int c = 0; c < d; c++) {
            assertEquals(y[c], y37[c], 9 * U * Math.abs(y[c]), "dim " + c);
        }
        float[] tiny = normalized(norm, scaled(x, 1e-20f));
        for (int c = 0; c < d; c++) {
            assertEquals(y[c], tiny[c], 8 * U * Math.abs(y[c]), "dim " + c + " (scaled by 1e-20)");
        }
    }

    private static float[] normalized(HeadTransforms norm, float[] x) {
        float[] y = x.clone();
        norm.applyToKeys(HeadLayout.headsMajor(y, 1, 1, 1, y.length), null);
        return y;
    }

    private static float[] scaled(float[] x, float f) {
        float[] y = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            y[i] = x[i] * f;
        }
        return y;
    }

    @Test
    void weightsAreCopied() {
        float[] w = {1, 1, 1, 1};
        HeadTransforms norm = HeadTransforms.none().withQkNorm(w, w, 0);
        w[0] = 100;
        float[] x = {2, -2, 2, -2};
        norm.applyToQueries(HeadLayout.headsMajor(x, 1, 1, 1, 4), null);
        assertArrayEquals(new float[] {1, -1, 1, -1}, x);
    }

    /**
     * Queries of a fused QKV projection row {@code (B, L, 3·H·d)}: norm then rotation of the q
     * columns against a double-precision computation here; the k and v columns untouched.
     */
    @Test
    void normThenRotaryInPlaceOnAFusedProjection() {
        SplittableRandom random = new SplittableRandom(3);
        int batch = 2, length = 5, heads = 3, d = 8, rotaryDim = 6, row = 3 * heads * d;
        float[] data = RandomTensors.uniform(random, batch * length * row).toArray();
        float[] before = data.clone();
        float[] qw = RandomTensors.uniform(random, d).toArray(), kw = RandomTensors.uniform(random, d).toArray();
        float eps = 1e-6f;
        double theta = 10000;
        for (boolean interleaved : new boolean[] {false, true}) {
            float[] x = before.clone();
            RotaryEmbedding rope = RotaryEmbedding.of(rotaryDim, theta);
            rope = interleaved ? rope.interleaved() : rope;
            HeadTransforms tf = HeadTransforms.none().withRotary(rope).withQkNorm(qw, kw, eps);
            tf.checkHeadDim(d);
            int[][] positions = {{0, 1, 2, 3, 4}, {10, 11, 12, 400, 9000}};
            tf.applyToQueries(HeadLayout.tokenMajor(x, 0, batch, length, heads, d, row), tf.at(positions, batch, length));
            for (int b = 0; b < batch; b++) {
                for (int t = 0; t < length; t++) {
                    int rowStart = (b * length + t) * row;
                    for (int h = 0; h < heads; h++) {
                        int base = rowStart + h * d;
                        double ss = 0;
                        for (int c = 0; c < d; c++) {
                            ss += (double) before[base + c] * before[base + c];
                        }
                        double r = 1 / Math.sqrt(ss / d + eps);
                        double[] n = new double[d];
                        for (int c = 0; c < d; c++) {
                            n[c] = before[base + c] * r * qw[c];
                        }
                        String where = rope + " b=" + b + " t=" + t + " h=" + h;
                        for (int i = 0; i < rotaryDim / 2; i++) {
                            int ix = interleaved ? 2 * i : i, iy = interleaved ? 2 * i + 1 : i + rotaryDim / 2;
                            double a = positions[b][t] * Math.pow(theta, -2.0 * i / rotaryDim);
                            double ex = n[ix] * Math.cos(a) - n[iy] * Math.sin(a);
                            double ey = n[ix] * Math.sin(a) + n[iy] * Math.cos(a);
                            // norm 3u per input value, then the rotation 3u(|x|+|y|)
                            double tol = 7 * U * (Math.abs(n[ix]) + Math.abs(n[iy]));
                            assertEquals(ex, x[base + ix], tol, where + " dim " + ix);
                            assertEquals(ey, x[base + iy], tol, where + " dim " + iy);
                        }
                        for (int c = rotaryDim; c < d; c++) {
                            assertEquals(n[c], x[base + c], 3 * U * Math.abs(n[c]), where + " tail dim " + c);
                        }
                    }
                    for (int c = heads * d; c < row; c++) {
                        assertEquals(before[rowStart + c], x[rowStart + c], "k/v column " + c + " untouched");
                    }
                }
            }
        }
    }

    @Test
    void rotaryAloneMatchesApply() {
        SplittableRandom random = new SplittableRandom(4);
        Tensor x = RandomTensors.uniform(random, 2, 3, 4, 8);
        int[][] positions = {{3, 4, 5, 6}, {0, 0, 1, 1}};
        RotaryEmbedding rope = RotaryEmbedding.of(8, 10000);
        float[] keys = x.toArray();
        HeadTransforms tf = HeadTransforms.none().withRotary(rope);
        tf.applyToKeys(HeadLayout.headsMajor(keys, 2, 3, 4, 8), tf.at(positions, 2, 4));
        assertArrayEquals(rope.apply(x, positions).toArray(), keys);
    }

    @Test
    void rejectsBadArguments() {
        HeadTransforms none = HeadTransforms.none();
        rejects("kWeight", () -> none.withQkNorm(new float[4], new float[3], 1e-6f));
        rejects("qWeight", () -> none.withQkNorm(new float[0], new float[0], 1e-6f));
        for (float eps : new float[] {-1e-6f, Float.NaN, Float.POSITIVE_INFINITY}) {
            IllegalArgumentException e = rejects("eps", () -> none.withQkNorm(W, W, eps));
            assertTrue(e.getMessage().startsWith("eps: expected a finite non-negative value"), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> none.withQkNorm(null, W, 0));
        assertThrows(NullPointerException.class, () -> none.withQkNorm(W, null, 0));
        assertThrows(NullPointerException.class, () -> none.withRotary(null));
        HeadTransforms norm = none.withQkNorm(W, W, 1e-6f);
        norm.checkHeadDim(4);
        IllegalArgumentException e = rejects("qWeight", () -> norm.checkHeadDim(8));
        assertTrue(e.getMessage().contains("headDim = 8") && e.getMessage().endsWith("got length 4"), e.getMessage());
        HeadTransforms rotary = none.withRotary(RotaryEmbedding.of(8, 10000));
        rotary.checkHeadDim(8);
        rotary.checkHeadDim(10);
        IllegalArgumentException r = rejects("rotaryDim", () -> rotary.checkHeadDim(6));
        assertEquals("rotaryDim: expected at most headDim = 6, got 8", r.getMessage());
    }

    private static IllegalArgumentException rejects(String argument, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(argument + ": expected "), () -> "message '" + e.getMessage() + "' should start with '" + argument + ": expected '");
        return e;
    }
}
