package io.github.attn4j.internal.kernel;

/**
 * The row loops in plain Java, for JVMs without the Vector API (or with it forced off). The
 * exponential is {@link ExpFloat#exp}, bit-identical to a lane of the vector form; sums run left
 * to right.
 */
final class ScalarRowOps implements RowOps {
    private static final float NEG_INF = Float.NEGATIVE_INFINITY;

    @Override
    public float expShiftSum(float[] x, int off, int n, float shift) {
        float total = 0f;
        for (int j = off; j < off + n; j++) {
            x[j] = ExpFloat.exp(x[j] - shift);
            total += x[j];
        }
        return total;
    }

    @Override
    public int sumLanes() {
        return 1;
    }

    @Override
    public int exp2ShiftAccumulateRows(float[] x, int off, int ld, int n, int r0, int r1, float[] shifts, float bound,
                                       float[] sums) {
        for (int r = r0; r < r1; r++) {
            int row = off + r * ld;
            float shift = shifts[r];
            if (shift == NEG_INF || bound != Float.POSITIVE_INFINITY && anyAbove(x, row, n, shift + bound)) {
                return r;
            }
            for (int j = row; j < row + n; j++) {
                x[j] = ExpFloat.exp2(x[j] - shift);
                sums[r] += x[j];
            }
        }
        return r1;
    }

    @Override
    public boolean anyAbove(float[] x, int off, int n, float bound) {
        for (int j = off; j < off + n; j++) {
            if (x[j] > bound) {
                return true;
            }
        }
        return false;
    }

    @Override
    public float max(float[] x, int off, int n) {
        float max = NEG_INF;
        for (int j = off; j < off + n; j++) {
            max = Math.max(max, x[j]);
        }
        return max;
    }

    @Override
    public float maxIgnoringNaN(float[] x, int off, int n) {
        float max = NEG_INF;
        for (int j = off; j < off + n; j++) {
            if (x[j] > max) {
                max = x[j];
            }
        }
        return max + 0f;
    }

    @Override
    public void scaleInto(float[] x, int off, int n, float factor, float[] dst, int dstOff) {
        for (int j = 0; j < n; j++) {
            dst[dstOff + j] = x[off + j] * factor;
        }
    }

    @Override
    public void addBias(float[] s, int off, int n, float[] bias, int at, float factor) {
        for (int j = 0; j < n; j++) {
            float b = bias[at + j];
            s[off + j] = b == NEG_INF ? NEG_INF : Math.fma(b, factor, s[off + j]);
        }
    }

    @Override
    public void add(float[] x, int off, int n, float[] y, int at) {
        for (int j = 0; j < n; j++) {
            x[off + j] += y[at + j];
        }
    }

    @Override
    public void mask(float[] s, int off, int n, float[] keep, int at) {
        for (int j = 0; j < n; j++) {
            if (keep[at + j] == 0f) {
                s[off + j] = NEG_INF;
            }
        }
    }

    @Override
    public boolean anyNonFinite(float[] x, int off, int n) {
        for (int j = off; j < off + n; j++) {
            if (!Float.isFinite(x[j])) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void softcap(float[] x, int off, int n, float cap) {
        for (int j = off; j < off + n; j++) {
            x[j] = cap * ExpFloat.tanh(x[j]);
        }
    }

    @Override
    public void addDistanceBias(float[] s, int off, int n, float slope, int center) {
        for (int j = 0; j < n; j++) {
            s[off + j] = Math.fma(-slope, Math.abs((float) center - (float) j), s[off + j]);
        }
    }

    @Override
    public boolean copyFinite(float[] src, int from, int srcStride, float[] dst, int to, int dstStride, int rows, int n) {
        boolean finite = true;
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < n; j++) {
                float x = src[from + r * srcStride + j];
                dst[to + r * dstStride + j] = x;
                finite &= Float.isFinite(x);
            }
        }
        return finite;
    }

    @Override
    public void transposeToPanel(float[] src, int from, int stride, int count, int d, float[] dst, int to) {
        for (int t = 0; t < count; t++) {
            int line = from + t * stride;
            for (int c = 0; c < d; c++) {
                dst[to + c * Kernels.NR + t] = src[line + c];
            }
        }
    }
}
