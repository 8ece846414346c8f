package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PyTorch state-dict weights and the textbook per-head interleaved QKV layer, against the reference. */
class WeightImportTest {
    private static float[] random(SplittableRandom r, int n) {
        return RandomTensors.uniformArray(r, n, 0.3);
    }

    private static float[] rows(float[] a, int fromRow, int rowCount, int width) {
        return Arrays.copyOfRange(a, fromRow * width, (fromRow + rowCount) * width);
    }

    @Test
    void pytorchStateDictLayoutMatchesTheReference() {
        for (int[] c : new int[][]{{32, 4, 4}, {48, 6, 2}, {16, 2, 1}}) {
            int e = c[0], h = c[1], kvh = c[2], hd = e / h;
            SplittableRandom r = new SplittableRandom(e + h + kvh);
            int qRows = h * hd, kvRows = kvh * hd;
            float[] inW = random(r, (qRows + 2 * kvRows) * e), inB = random(r, qRows + 2 * kvRows);
            float[] outW = random(r, e * qRows), outB = random(r, e);
            MultiHeadAttention m = MultiHeadAttention.builder(e, h).kvHeads(kvh).pytorchWeights(inW, inB, outW, outB).build();
            ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, kvh, hd, (float) (1 / Math.sqrt(hd)),
                    rows(inW, 0, qRows, e), rows(inW, qRows, kvRows, e), rows(inW, qRows + kvRows, kvRows, e), outW,
                    rows(inB, 0, qRows, 1), rows(inB, qRows, kvRows, 1), rows(inB, qRows + kvRows, kvRows, 1), outB);
            Tensor x = uniform(r, 2, 11, e);
            float[] expected = ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), p).output().toArray();
            Tolerance.assertClose(expected, m.forward(x, AttentionMask.causal()).toArray(), 2 * e + 11 + hd, "state dict " + e + "/" + h + "/" + kvh);
        }
    }

    @Test
    void pytorchLayoutWithoutBiases() {
        int e = 24, h = 3;
        SplittableRandom r = new SplittableRandom(5);
        float[] inW = random(r, 3 * e * e), outW = random(r, e * e);
        MultiHeadAttention m = MultiHeadAttention.builder(e, h).pytorchWeights(inW, null, outW, null).build();
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, h, e / h, (float) (1 / Math.sqrt(e / h)),
                rows(inW, 0, e, e), rows(inW, e, e, e), rows(inW, 2 * e, e, e), outW, null, null, null, null);
        Tensor x = uniform(r, 1, 9, e);
        Tolerance.assertClose(ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p).output().toArray(),
                m.forward(x, AttentionMask.none()).toArray(), 2 * e + 9, "no bias");
    }

    @Test
    void interleavedQkvLayerMatchesTheTextbookComputation() {
        int e = 24, h = 3, hd = 8, batch = 2, len = 7;
        SplittableRandom r = new SplittableRandom(6);
        float[] qkvW = random(r, 3 * e * e), qkvB = random(r, 3 * e), outW = random(r, e * e), outB = random(r, e);
        Tensor x = uniform(r, batch, len, e);
        MultiHeadAttention m = MultiHeadAttention.builder(e, h).interleavedQkvWeights(qkvW, qkvB, outW, outB).build();

        // Textbook: qkv = x·Wᵀ + b, reshaped (B, L, H, 3·hd), chunked into q | k | v per head.
        float[] xs = x.toArray();
        float[][] parts = new float[3][batch * h * len * hd];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < len; t++) {
                for (int f = 0; f < 3 * e; f++) {
                    double acc = qkvB[f];
                    for (int i = 0; i < e; i++) {
                        acc += xs[(b * len + t) * e + i] * qkvW[f * e + i];
                    }
                    int head = f / (3 * hd), part = f % (3 * hd) / hd, c = f % hd;
                    parts[part][((b * h + head) * len + t) * hd + c] = (float) acc;
                }
            }
        }
        Tensor heads = ReferenceAttention.scaledDotProduct(Tensor.of(parts[0], batch, h, len, hd), Tensor.of(parts[1], batch, h, len, hd),
                Tensor.of(parts[2], batch, h, len, hd), AttentionMask.causal(), (float) (1 / Math.sqrt(hd))).output();
        float[] expected = new float[batch * len * e];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < len; t++) {
                for (int o = 0; o < e; o++) {
                    double acc = outB[o];
                    for (int head = 0; head < h; head++) {
                        for (int c = 0; c < hd; c++) {
                            acc += heads.get(b, head, t, c) * outW[o * e + head * hd + c];
                        }
                    }
                    expected[(b * len + t) * e + o] = (float) acc;
                }
            }
        }
        Tolerance.assertClose(expected, m.forward(x, AttentionMask.causal()).toArray(), 2 * e + len + hd, "interleaved qkv");
    }

    @Test
    void rejectsWrongLayouts() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MultiHeadAttention.builder(8, 2).pytorchWeights(new float[3 * 64 - 1], null, new float[64], null));
        assertTrue(e.getMessage().startsWith("inProjWeight") && e.getMessage().contains("got 191"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MultiHeadAttention.builder(8, 2).pytorchWeights(new float[3 * 64], new float[24], new float[64], null));
        assertTrue(e.getMessage().startsWith("inProjBias"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MultiHeadAttention.builder(8, 2).kvHeads(1).interleavedQkvWeights(new float[3 * 64], null, new float[64], null));
        assertTrue(e.getMessage().startsWith("kvHeads"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MultiHeadAttention.builder(8, 2).interleavedQkvWeights(new float[3 * 64], new float[23], new float[64], new float[8]));
        assertTrue(e.getMessage().startsWith("qkvBias"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2).scale(Float.POSITIVE_INFINITY));
        assertTrue(e.getMessage().startsWith("scale"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MultiHeadAttention.builder(8, 2).keyDim(5).build().forward(Tensor.zeros(1, 2, 8), Tensor.zeros(1, 3, 8), Tensor.zeros(1, 3, 8), AttentionMask.none()));
        assertTrue(e.getMessage().startsWith("key") && e.getMessage().contains("keyDim = 5"), e.getMessage());
    }
}
