package io.github.attn4j;

/**
 * The inverse frequency of each rotary pair, {@code theta^(-2i/r)}, rescaled by a Llama 3.1 or a
 * YaRN scaling ({@link RotaryEmbedding}'s class comment gives both rules). In double precision.
 */
final class RopeFrequencies {
    private RopeFrequencies() {
    }

    /** {@code rotaryDim / 2} inverse frequencies; at most one of the scalings is not null. */
    static double[] inverse(int rotaryDim, double theta, RotaryEmbedding.Llama3Scaling llama3, RotaryEmbedding.YarnScaling yarn) {
        double[] inv = new double[rotaryDim / 2];
        for (int i = 0; i < inv.length; i++) {
            inv[i] = Math.pow(theta, -2.0 * i / rotaryDim);
        }
        if (llama3 != null) {
            llama3(inv, llama3);
        } else if (yarn != null) {
            yarn(inv, rotaryDim, theta, yarn);
        }
        return inv;
    }

    private static void llama3(double[] inv, RotaryEmbedding.Llama3Scaling s) {
        double lowWavelen = s.originalMaxPositions() / s.lowFreqFactor();
        double highWavelen = s.originalMaxPositions() / s.highFreqFactor();
        for (int i = 0; i < inv.length; i++) {
            double wavelen = 2 * Math.PI / inv[i];
            if (wavelen > lowWavelen) {
                inv[i] = inv[i] / s.factor();
            } else if (wavelen >= highWavelen) {
                double smooth = (s.originalMaxPositions() / wavelen - s.lowFreqFactor())
                        / (s.highFreqFactor() - s.lowFreqFactor());
                inv[i] = (1 - smooth) * inv[i] / s.factor() + smooth * inv[i];
            }
        }
    }

    /** YaRN: a linear ramp over pair indices from keeping the frequency (below low) to dividing it by factor (above high). */
    private static void yarn(double[] inv, int rotaryDim, double theta, RotaryEmbedding.YarnScaling s) {
        double low = correctionDim(s.betaFast(), rotaryDim, theta, s.originalMaxPositions());
        double high = correctionDim(s.betaSlow(), rotaryDim, theta, s.originalMaxPositions());
        if (s.truncate()) {
            low = Math.floor(low);
            high = Math.ceil(high);
        }
        low = Math.max(low, 0);
        high = Math.min(high, rotaryDim - 1);
        if (high == low) {
            high += 0.001;
        }
        for (int i = 0; i < inv.length; i++) {
            double ramp = Math.min(1, Math.max(0, (i - low) / (high - low)));
            inv[i] = ramp * (inv[i] / s.factor()) + (1 - ramp) * inv[i];
        }
    }

    /** The (fractional) pair index whose wavelength fits {@code rotations} times into {@code maxPositions}. */
    private static double correctionDim(double rotations, int rotaryDim, double theta, int maxPositions) {
        return rotaryDim * Math.log(maxPositions / (rotations * 2 * Math.PI)) / (2 * Math.log(theta));
    }
}
