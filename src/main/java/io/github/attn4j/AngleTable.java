package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;

import java.util.Arrays;

/**
 * The cos and sin of every pair's angle at each distinct position of one call, rows of
 * {@code rotaryDim / 2} floats. When the positions span at most as many values as there are
 * tokens (prefill {@code 0..L-1} in every batch row, decoding steps close together), the rows
 * cover that span and are indexed by {@code p - min}; otherwise one row per distinct position,
 * found by binary search. Also the rotation of a head layout's rows by it, for
 * {@link RotaryEmbedding}.
 */
final class AngleTable {
    final float[] cos;
    final float[] sin;
    private final int min;
    /** Pairs per row: {@code rotaryDim / 2}. */
    private final int half;
    /** The sorted distinct positions, or null when rows are indexed by {@code p - min}. */
    private final int[] distinct;

    /**
     * The table for {@code positions [batch][length]}, pairs turning by {@code invFreq} per
     * position over {@code linearFactor}, cosines and sines multiplied by {@code magnitude}.
     */
    AngleTable(int[][] positions, int batch, int length, double[] invFreq, double linearFactor, double magnitude) {
        int lo = Integer.MAX_VALUE, hi = Integer.MIN_VALUE;
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                int p = positions[b][t];
                lo = Math.min(lo, p);
                hi = Math.max(hi, p);
            }
        }
        long tokens = (long) batch * length;
        int rows;
        if ((long) hi - lo + 1 <= tokens) {
            distinct = null;
            rows = hi - lo + 1;
        } else {
            int[] all = new int[Math.toIntExact(tokens)];
            for (int b = 0, n = 0; b < batch; b++, n += length) {
                System.arraycopy(positions[b], 0, all, n, length);
            }
            Arrays.sort(all);
            int n = 0;
            for (int i = 0; i < all.length; i++) {
                if (i == 0 || all[i] != all[i - 1]) {
                    all[n++] = all[i];
                }
            }
            distinct = Arrays.copyOf(all, n);
            rows = n;
        }
        min = lo;
        half = invFreq.length;
        int size = Math.multiplyExact(rows, half);
        cos = new float[size];
        sin = new float[size];
        for (int r = 0; r < rows; r++) {
            int p = distinct == null ? lo + r : distinct[r];
            double scaled = p / linearFactor;
            for (int i = 0, k = r * half; i < half; i++, k++) {
                double a = scaled * invFreq[i];
                cos[k] = (float) (magnitude * Math.cos(a));
                sin[k] = (float) (magnitude * Math.sin(a));
            }
        }
    }

    /** The table row of position {@code p}, one of the positions the table was built for. */
    int row(int p) {
        return distinct == null ? p - min : Arrays.binarySearch(distinct, p);
    }

    /**
     * Rotates the first {@code 2 * half} values of every (batch, token, head) row of {@code x} in
     * place (a non-empty layout), token {@code t} of batch row {@code b} by the row of position
     * {@code positions[b][t]}, pairs {@code (2j, 2j + 1)} when {@code interleaved}, else
     * {@code (j, j + half)}.
     */
    void rotate(HeadLayout x, int[][] positions, boolean interleaved) {
        float[] v = x.data();
        for (int b = 0; b < x.batch(); b++) {
            int[] rowPositions = positions[b];
            for (int t = 0; t < x.length(); t++) {
                int row = row(rowPositions[t]) * half;
                for (int h = 0; h < x.heads(); h++) {
                    int base = x.at(b, t, h);
                    if (interleaved) {
                        rotateInterleaved(v, base, cos, sin, row, half);
                    } else {
                        rotateHalf(v, base, cos, sin, row, half);
                    }
                }
            }
        }
    }

    /** {@code (x, y) ← (x c − y s, y c + x s)} for the pairs {@code (j, j + half)}. */
    private static void rotateHalf(float[] v, int base, float[] cos, float[] sin, int row, int half) {
        for (int j = 0; j < half; j++) {
            float x = v[base + j], y = v[base + half + j];
            float c = cos[row + j], s = sin[row + j];
            v[base + j] = Math.fma(x, c, -(y * s));
            v[base + half + j] = Math.fma(y, c, x * s);
        }
    }

    /** {@code (x, y) ← (x c − y s, y c + x s)} for the pairs {@code (2j, 2j + 1)}. */
    private static void rotateInterleaved(float[] v, int base, float[] cos, float[] sin, int row, int half) {
        for (int j = 0; j < half; j++) {
            int i = base + 2 * j;
            float x = v[i], y = v[i + 1];
            float c = cos[row + j], s = sin[row + j];
            v[i] = Math.fma(x, c, -(y * s));
            v[i + 1] = Math.fma(y, c, x * s);
        }
    }
}
