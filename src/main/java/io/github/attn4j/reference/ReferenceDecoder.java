package io.github.attn4j.reference;

import io.github.attn4j.RotaryEmbedding;

import java.util.Objects;

/**
 * The per-head transforms of a decoder layer, from their formulas, one vector at a time and in
 * double precision: RMSNorm of a head's values (QK-norm) and the rotary position embedding
 * (with linear, Llama 3.1 or YaRN scaling). The
 * rotation reads its configuration through {@link RotaryEmbedding}'s getters only and never calls
 * {@link RotaryEmbedding#apply}.
 */
final class ReferenceDecoder {
    private ReferenceDecoder() {
    }

    /** RMSNorm: {@code y_c = x_c / sqrt(mean_c(x_c²) + eps) · w_c}. */
    static double[] rmsNorm(double[] x, float[] w, double eps) {
        double sumSquares = 0;
        for (double v : x) {
            sumSquares += v * v;
        }
        double rms = Math.sqrt(sumSquares / x.length + eps);
        double[] y = new double[x.length];
        for (int c = 0; c < x.length; c++) {
            y[c] = x[c] / rms * w[c];
        }
        return y;
    }

    /**
     * {@code invFreq_i = theta^(-2i/r)} for {@code i < r/2}, then, with Llama 3 scaling, by
     * wavelength {@code 2π/invFreq}: kept below {@code originalMaxPositions/highFreqFactor},
     * divided by {@code factor} above {@code originalMaxPositions/lowFreqFactor}, and in between
     * {@code (1 - smooth)·invFreq/factor + smooth·invFreq} with
     * {@code smooth = (originalMaxPositions/wavelen - lowFreqFactor)/(highFreqFactor - lowFreqFactor)}.
     */
    static double[] inverseFrequencies(RotaryEmbedding rope) {
        int r = rope.rotaryDim();
        double[] invFreq = new double[r / 2];
        for (int i = 0; i < r / 2; i++) {
            invFreq[i] = Math.pow(rope.theta(), -2.0 * i / r);
        }
        RotaryEmbedding.Llama3Scaling s = rope.llama3();
        if (s != null) {
            double lowWavelen = s.originalMaxPositions() / s.lowFreqFactor();
            double highWavelen = s.originalMaxPositions() / s.highFreqFactor();
            for (int i = 0; i < invFreq.length; i++) {
                double wavelen = 2 * Math.PI / invFreq[i];
                if (wavelen < highWavelen) {
                    continue;
                }
                if (wavelen > lowWavelen) {
                    invFreq[i] = invFreq[i] / s.factor();
                } else {
                    double smooth = (s.originalMaxPositions() / wavelen - s.lowFreqFactor())
                            / (s.highFreqFactor() - s.lowFreqFactor());
                    invFreq[i] = (1 - smooth) * invFreq[i] / s.factor() + smooth * invFreq[i];
                }
            }
        }
        RotaryEmbedding.YarnScaling y = rope.yarn();
        if (y != null) {
            double[] ends = yarnRamp(y, r, rope.theta());
            for (int i = 0; i < invFreq.length; i++) {
                double ramp = (i - ends[0]) / (ends[1] - ends[0]);
                ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
                invFreq[i] = invFreq[i] / y.factor() * ramp + invFreq[i] * (1 - ramp);
            }
        }
        return invFreq;
    }

    /**
     * YaRN's ramp over pair indices, {@code [low, high]}: {@code low} is the index at which the
     * wavelength {@code 2π theta^(2i/r)} fits {@code betaFast} times into the original context,
     * {@code high} where it fits {@code betaSlow} times, that is
     * {@code i = r ln(originalMaxPositions / (2π beta)) / (2 ln theta)}; rounded outwards when
     * {@code truncate}, kept within {@code [0, r - 1]}, and {@code high} 0.001 above {@code low}
     * if they meet.
     */
    static double[] yarnRamp(RotaryEmbedding.YarnScaling y, int r, double theta) {
        double low = r / 2.0 * Math.log(y.originalMaxPositions() / (2 * Math.PI * y.betaFast())) / Math.log(theta);
        double high = r / 2.0 * Math.log(y.originalMaxPositions() / (2 * Math.PI * y.betaSlow())) / Math.log(theta);
        if (y.truncate()) {
            low = Math.floor(low);
            high = Math.ceil(high);
        }
        low = Math.max(0, low);
        high = Math.min(r - 1, high);
        return new double[] {low, high == low ? high + 0.001 : high};
    }

    /**
     * {@code x} rotated for a token at {@code position}: pair {@code i} ({@code (i, i + r/2)}, or
     * {@code (2i, 2i+1)} interleaved) by angle {@code (position / linearFactor) · invFreq_i},
     * {@code (x, y) -> (x cos a - y sin a, x sin a + y cos a)}, times YaRN's attention factor when
     * set; dims from {@code r} on unchanged.
     */
    static double[] rotate(double[] x, int position, RotaryEmbedding rope) {
        double[] invFreq = inverseFrequencies(rope);
        int half = rope.rotaryDim() / 2;
        double p = position / rope.linearFactor();
        double m = rope.yarn() == null ? 1 : rope.yarn().attentionFactor();
        double[] y = x.clone();
        for (int i = 0; i < half; i++) {
            int first = rope.isInterleaved() ? 2 * i : i;
            int second = rope.isInterleaved() ? 2 * i + 1 : i + half;
            double a = p * invFreq[i];
            y[first] = m * (x[first] * Math.cos(a) - x[second] * Math.sin(a));
            y[second] = m * (x[first] * Math.sin(a) + x[second] * Math.cos(a));
        }
        return y;
    }

    /** Checks a RoPE configuration for heads of width {@code headDim}. */
    static void checkRope(RotaryEmbedding rope, int headDim, String name) {
        Objects.requireNonNull(rope, name + " must not be null");
        int r = rope.rotaryDim();
        check(r > 0 && r % 2 == 0 && r <= headDim, name + ".rotaryDim",
                "a positive even value <= head width " + headDim, r);
        check(Double.isFinite(rope.theta()) && rope.theta() > 0, name + ".theta", "a finite positive value", rope.theta());
        check(Double.isFinite(rope.linearFactor()) && rope.linearFactor() > 0, name + ".linearFactor",
                "a finite positive value", rope.linearFactor());
        RotaryEmbedding.Llama3Scaling s = rope.llama3();
        if (s != null) {
            check(Double.isFinite(s.factor()) && s.factor() > 0, name + ".llama3.factor", "a finite positive value", s.factor());
            check(Double.isFinite(s.lowFreqFactor()) && s.lowFreqFactor() > 0, name + ".llama3.lowFreqFactor",
                    "a finite positive value", s.lowFreqFactor());
            check(Double.isFinite(s.highFreqFactor()) && s.highFreqFactor() > s.lowFreqFactor(), name + ".llama3.highFreqFactor",
                    "a finite value > lowFreqFactor = " + s.lowFreqFactor(), s.highFreqFactor());
            check(s.originalMaxPositions() > 0, name + ".llama3.originalMaxPositions", "a positive value",
                    s.originalMaxPositions());
        }
        RotaryEmbedding.YarnScaling y = rope.yarn();
        if (y != null) {
            check(Double.isFinite(y.factor()) && y.factor() > 0, name + ".yarn.factor", "a finite positive value", y.factor());
            check(y.originalMaxPositions() > 0, name + ".yarn.originalMaxPositions", "a positive value", y.originalMaxPositions());
            check(Double.isFinite(y.betaSlow()) && y.betaSlow() > 0, name + ".yarn.betaSlow", "a finite positive value", y.betaSlow());
            check(Double.isFinite(y.betaFast()) && y.betaFast() > y.betaSlow(), name + ".yarn.betaFast",
                    "a finite value > betaSlow = " + y.betaSlow(), y.betaFast());
            check(Double.isFinite(y.attentionFactor()) && y.attentionFactor() > 0, name + ".yarn.attentionFactor",
                    "a finite positive value", y.attentionFactor());
        }
    }

    /** Checks positions {@code [batch][length]}, each non-negative. */
    static void checkPositions(int[][] positions, int batch, int length, String name) {
        Objects.requireNonNull(positions, name + " must not be null");
        check(positions.length == batch, name, batch + " rows (B)", positions.length + " rows");
        for (int b = 0; b < batch; b++) {
            Objects.requireNonNull(positions[b], name + "[" + b + "] must not be null");
            check(positions[b].length == length, name + "[" + b + "]", "length " + length + " (L)", "length " + positions[b].length);
            for (int t = 0; t < length; t++) {
                check(positions[b][t] >= 0, name + "[" + b + "][" + t + "]", "a non-negative position", positions[b][t]);
            }
        }
    }

    private static void check(boolean ok, String name, String expected, Object actual) {
        if (!ok) {
            throw new IllegalArgumentException(name + ": expected " + expected + ", got " + actual);
        }
    }
}
