package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;

/**
 * The score steps of {@link ReferenceAttention#scaledDotProduct}, in double precision, in their
 * documented order: scale, soft-cap, biases and ALiBi and mask ({@link MaskOracle}), softmax
 * with the head's sink, weighted values.
 */
final class ReferenceScores {
    private ReferenceScores() {
    }

    /** The score steps and weighted values for every (batch, head); fills {@code weights[b][h]}, returns the outputs. */
    static double[][][][] attend(double[][][][] q, double[][][][] k, double[][][][] v, int dv, AttentionMask mask,
                                 ReferenceAttention.ScoreOptions options, double[][][][] weights) {
        int batch = q.length, h = batch == 0 ? 0 : q[0].length, kvh = batch == 0 ? 1 : k[0].length;
        int lq = h == 0 ? 0 : q[0][0].length, lk = batch == 0 || kvh == 0 ? 0 : k[0][0].length;
        mask.checkApplicable(batch, h, lq, lk);
        MaskOracle oracle = new MaskOracle(mask, batch, h, lq, lk);
        double scale = options.scale(), cap = options.softcap();
        double[][][][] out = new double[batch][h][][];
        for (int b = 0; b < batch; b++) {
            for (int head = 0; head < h; head++) {
                int g = head / (h / kvh);
                double sink = options.sinks() == null ? Double.NEGATIVE_INFINITY : options.sinks()[head];
                double[][] scores = new double[lq][lk];
                for (int i = 0; i < lq; i++) {
                    for (int j = 0; j < lk; j++) {
                        double dot = 0;
                        for (int c = 0; c < q[b][head][i].length; c++) {
                            dot += q[b][head][i][c] * k[b][g][j][c];
                        }
                        scores[i][j] = scale * dot;                                   // scale
                        if (cap > 0) {
                            scores[i][j] = cap * Math.tanh(scores[i][j] / cap);       // soft-cap
                        }
                        scores[i][j] = oracle.apply(scores[i][j], b, head, i, j);     // biases, ALiBi, mask
                    }
                    scores[i] = softmax(scores[i], sink);                             // softmax with sink
                }
                double[][] o = new double[lq][dv];
                for (int i = 0; i < lq; i++) {
                    for (int j = 0; j < lk; j++) {
                        for (int c = 0; c < dv; c++) {
                            o[i][c] += scores[i][j] * v[b][g][j][c];                  // weight values
                        }
                    }
                }
                weights[b][head] = scores;
                out[b][head] = o;
            }
        }
        return out;
    }

    /**
     * {@code w_j = exp(x_j) / (Σ_k exp(x_k) + exp(sink))}, with {@code max(max_j x_j, sink)}
     * subtracted; {@code sink = -Infinity} is no sink. A row of only -Infinity gives zeros.
     */
    static double[] softmax(double[] x, double sink) {
        double max = Double.NEGATIVE_INFINITY;
        for (double d : x) {
            max = Math.max(max, d);
        }
        double[] y = new double[x.length];
        if (max == Double.NEGATIVE_INFINITY) {
            return y;
        }
        max = Math.max(max, sink);
        double sum = Math.exp(sink - max);
        for (int j = 0; j < x.length; j++) {
            y[j] = Math.exp(x[j] - max);
            sum += y[j];
        }
        for (int j = 0; j < x.length; j++) {
            y[j] /= sum;
        }
        return y;
    }
}
