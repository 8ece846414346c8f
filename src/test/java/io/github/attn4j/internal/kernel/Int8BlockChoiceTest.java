package io.github.attn4j.internal.kernel;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.Tensor;
import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The measurement behind {@link Int8Panels#BLOCK}: the attention output error of INT8 caches with
 * one scale per 32 values against one scale per (token, head) vector of 128, on Gaussian data
 * and on keys whose 4 outlier channels (of 128, in two of the four blocks) are 16 times larger
 * than the rest (as real keys have a few), one decoding
 * query per head (16 heads over 4 key/value heads, 4096 cached tokens), against the double
 * reference. The float32 and 16-bit caches are measured alongside for scale.
 */
class Int8BlockChoiceTest {
    private static final int L = 4096, D = 128, KVH = 4, H = 16;

    /** Relative RMS error of attention over sources built by {@code make} for each (kv head), against {@code ref}. */
    private static double error(float[] q, float[] k, float[] v, float[] ref, IntFunction<KeyValueSource> make) {
        KeyValueSource[] sources = new KeyValueSource[KVH];
        for (int g = 0; g < KVH; g++) {
            sources[g] = make.apply(g);
            sources[g].append(HeadLayout.headsMajor(k, 1, KVH, L, D), HeadLayout.headsMajor(v, 1, KVH, L, D), 0, g, L);
        }
        float[] out = new float[H * D];
        ScoreMask none = new ScoreMask(1, new int[]{L - 1}, new int[]{1}, null, 0, null, List.of(), List.of());
        AttentionKernel.forward(HeadLayout.headsMajor(q, 1, H, 1, D), sources, KVH, HeadLayout.headsMajor(out, 1, H, 1, D), none,
                AttentionKernel.Scores.scaled((float) (1 / Math.sqrt(D))), 2);
        double num = 0, den = 0;
        for (int i = 0; i < ref.length; i++) {
            num += ((double) out[i] - ref[i]) * ((double) out[i] - ref[i]);
            den += (double) ref[i] * ref[i];
        }
        return Math.sqrt(num / den);
    }

    private static float[] gaussian(SplittableRandom random, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) random.nextGaussian();
        }
        return x;
    }

    @Test
    void blocksOf32BeatOneScalePerVector() {
        SplittableRandom random = new SplittableRandom(2024);
        float[] q = gaussian(random, H * D), k = gaussian(random, KVH * L * D), v = gaussian(random, KVH * L * D);
        float[] outlierKeys = k.clone();
        for (int i = 0; i < outlierKeys.length; i++) {
            int c = i % D;
            if (c == 5 || c == 20 || c == 45 || c == 46) {      // in the first two of four blocks of 32
                outlierKeys[i] *= 16;
            }
        }
        StringBuilder report = new StringBuilder();
        double[][] int8 = new double[2][2];
        for (int data = 0; data < 2; data++) {
            float[] keys = data == 0 ? k : outlierKeys;
            float[] ref = ReferenceAttention.scaledDotProduct(Tensor.of(q, 1, H, 1, D), Tensor.of(keys, 1, KVH, L, D),
                    Tensor.of(v, 1, KVH, L, D), AttentionMask.none(), (float) (1 / Math.sqrt(D))).output().toArray();
            double f32 = error(q, keys, v, ref, g -> new KeyValuePanels(D, D, L));
            double f16 = error(q, keys, v, ref, g -> HalfPanels.f16(D, D, L));
            double bf16 = error(q, keys, v, ref, g -> HalfPanels.bf16(D, D, L));
            int8[data][0] = error(q, keys, v, ref, g -> new Int8Panels(D, D, L, Int8Panels.BLOCK));
            int8[data][1] = error(q, keys, v, ref, g -> new Int8Panels(D, D, L, D));
            report.append(String.format(Locale.ROOT, "%s: F32 %.2e, F16 %.2e, BF16 %.2e, INT8 blocks of 32 %.2e, INT8 per vector %.2e%n",
                    data == 0 ? "Gaussian" : "outlier keys", f32, f16, bf16, int8[data][0], int8[data][1]));
        }
        System.out.print("Relative RMS error of the attention output (L = 4096, d = 128):\n" + report);
        assertTrue(int8[0][0] < int8[0][1] && int8[1][0] < int8[1][1], report.toString());
        assertTrue(int8[0][0] <= 2e-2 && int8[0][1] <= 2e-2, report.toString());
    }
}
