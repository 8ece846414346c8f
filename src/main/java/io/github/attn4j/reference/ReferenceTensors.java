package io.github.attn4j.reference;

import io.github.attn4j.Tensor;

import java.util.Arrays;
import java.util.Objects;

/** Tensors to and from nested double arrays, the dense steps of the module, and argument checks. */
final class ReferenceTensors {
    private ReferenceTensors() {
    }

    /** {@code y = x·Wᵀ + b} with W {@code (out, in)} row-major. */
    static double[][] linear(double[][] x, float[] w, float[] bias, int out) {
        double[][] y = new double[x.length][out];
        for (int r = 0; r < x.length; r++) {
            int in = x[r].length;
            for (int o = 0; o < out; o++) {
                double acc = bias == null ? 0 : bias[o];
                for (int c = 0; c < in; c++) {
                    acc += x[r][c] * w[o * in + c];
                }
                y[r][o] = acc;
            }
        }
        return y;
    }

    /** (B*L, heads*hd) -> [b][head][t][c]. */
    static double[][][][] splitHeads(double[][] x, int batch, int length, int heads, int hd) {
        double[][][][] y = new double[batch][heads][length][hd];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                for (int head = 0; head < heads; head++) {
                    System.arraycopy(x[b * length + t], head * hd, y[b][head][t], 0, hd);
                }
            }
        }
        return y;
    }

    /** [b][h][t][c] -> (B*L, H*hd). */
    static double[][] mergeHeads(double[][][][] x, int batch, int h, int length, int hd) {
        double[][] merged = new double[batch * length][h * hd];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int t = 0; t < length; t++) {
                    System.arraycopy(x[b][head][t], 0, merged[b * length + t], head * hd, hd);
                }
            }
        }
        return merged;
    }

    /** A rank-3 tensor (B, L, E) as B*L rows of E doubles. */
    static double[][] rows(Tensor t) {
        float[] a = t.toArray();
        int width = t.dim(2), n = t.dim(0) * t.dim(1);
        double[][] r = new double[n][width];
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < width; c++) {
                r[i][c] = a[i * width + c];
            }
        }
        return r;
    }

    /** A rank-4 tensor as [b][head][t][c]. */
    static double[][][][] heads(Tensor t) {
        float[] a = t.toArray();
        int[] s = t.shape();
        double[][][][] y = new double[s[0]][s[1]][s[2]][s[3]];
        int i = 0;
        for (double[][][] b : y) {
            for (double[][] head : b) {
                for (double[] row : head) {
                    for (int c = 0; c < row.length; c++) {
                        row[c] = a[i++];
                    }
                }
            }
        }
        return y;
    }

    static Tensor toTensor(double[][] rows, int... shape) {
        int width = shape[shape.length - 1];
        float[] a = new float[rows.length * width];
        for (int r = 0; r < rows.length; r++) {
            for (int c = 0; c < width; c++) {
                a[r * width + c] = (float) rows[r][c];
            }
        }
        return Tensor.of(a, shape);
    }

    /** [b][h][t][c] as a tensor (B, H, L, width). */
    static Tensor toTensor4(double[][][][] x, int batch, int h, int length, int width) {
        double[][] rows = new double[batch * h * length][];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                for (int i = 0; i < length; i++) {
                    rows[(b * h + head) * length + i] = x[b][head][i];
                }
            }
        }
        return toTensor(rows, batch, h, length, width);
    }

    /**
     * Rejects, before anything is allocated, a result or buffer whose element count passes
     * {@code Integer.MAX_VALUE - 8}, the largest array the reference (like the library) builds.
     */
    static void checkCount(String name, long... dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
            if (n > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException(name + ": element count of " + Arrays.toString(dims)
                        + " exceeds the limit of " + (Integer.MAX_VALUE - 8) + " elements");
            }
        }
    }

    static int rank3(Tensor t, String name, int e) {
        Objects.requireNonNull(t, name + " must not be null");
        if (t.rank() != 3 || t.dim(2) != e) {
            throw new IllegalArgumentException(name + ": expected shape (B, L, " + e + "), got " + Arrays.toString(t.shape()));
        }
        return t.dim(0);
    }

    static void rank4(Tensor t, String name) {
        Objects.requireNonNull(t, name + " must not be null");
        if (t.rank() != 4) {
            throw new IllegalArgumentException(name + ": expected rank 4 (B, heads, L, width), got " + Arrays.toString(t.shape()));
        }
    }

    static void positive(int value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": expected a positive value, got " + value);
        }
    }

    static void length(float[] a, long expected, String name) {
        Objects.requireNonNull(a, name + " must not be null");
        if (a.length != expected) {
            throw new IllegalArgumentException(name + ": expected length " + expected + ", got " + a.length);
        }
    }

    /** Each value finite; null passes (absent). */
    static void finite(float[] a, String name) {
        if (a == null) {
            return;
        }
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) {
                throw new IllegalArgumentException(name + "[" + i + "]: expected a finite value, got " + a[i]);
            }
        }
    }

    /** 0 (absent) or finite and positive. */
    static void checkSoftcap(float cap, String name) {
        if (!(Float.isFinite(cap) && cap >= 0)) {
            throw new IllegalArgumentException(name + ": expected 0 (none) or a finite positive value, got " + cap);
        }
    }
}
