package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OrtException;
import io.github.attn4j.AttentionMask;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.RandomTensors;
import io.github.attn4j.Tensor;
import io.github.attn4j.Tolerance;
import io.github.attn4j.jmh.peer.OnnxAttentionSession;
import io.github.attn4j.jmh.peer.OnnxModel;
import io.github.attn4j.jmh.peer.ProtoWriter;
import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * The ONNX model of {@link OnnxRuntimeAttentionBenchmark} run by ONNX Runtime against the scalar
 * reference on small shapes with every mask, the benchmark's seeded weights against the seeded
 * module, its setup check, and the protobuf encoding underneath.
 */
class OnnxRuntimeAttentionBenchmarkTest {
    private static float[] uniform(SplittableRandom random, int n) {
        return RandomTensors.uniformArray(random, n);
    }

    /** Padding flags that differ between batch rows and leave every row at least one key. */
    private static boolean[][] raggedPadding(int batch, int length) {
        boolean[][] padded = new boolean[batch][length];
        for (int b = 0; b < batch; b++) {
            Arrays.fill(padded[b], length - (b * length) / (2 * batch) - length / 4, length, true);
        }
        return padded;
    }

    private static void checkAgainstReference(int e, int h, int batch, int length, String mask, boolean bias, int threads)
            throws OrtException {
        SplittableRandom random = new SplittableRandom(31L * e + 7L * length + h + (bias ? 1 : 0));
        float[] inW = uniform(random, 3 * e * e);
        float[] outW = uniform(random, e * e);
        float[] inB = bias ? uniform(random, 3 * e) : null;
        float[] outB = bias ? uniform(random, e) : null;
        float[] x = uniform(random, batch * length * e);
        boolean[][] padded = mask.equals("padding") ? raggedPadding(batch, length) : null;

        OnnxModel.Mask kind = OnnxModel.Mask.of(mask);
        byte[] model = OnnxModel.multiHeadAttention(e, h, kind, inW, inB, outW, outB);
        float[] actual;
        try (OnnxAttentionSession session = new OnnxAttentionSession(model, kind, threads, x, batch, length, e, padded)) {
            session.run();
            actual = session.output();
        }

        int hd = e / h;
        ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, h, hd, (float) (1 / Math.sqrt(hd)),
                Arrays.copyOfRange(inW, 0, e * e), Arrays.copyOfRange(inW, e * e, 2 * e * e),
                Arrays.copyOfRange(inW, 2 * e * e, 3 * e * e), outW,
                bias ? Arrays.copyOfRange(inB, 0, e) : null, bias ? Arrays.copyOfRange(inB, e, 2 * e) : null,
                bias ? Arrays.copyOfRange(inB, 2 * e, 3 * e) : null, outB);
        AttentionMask attentionMask = switch (mask) {
            case "none" -> AttentionMask.none();
            case "causal" -> AttentionMask.causal();
            default -> AttentionMask.keyPadding(padded);
        };
        Tensor input = Tensor.of(x, batch, length, e);
        float[] expected = ReferenceAttention.multiHead(input, input, input, attentionMask, p).output().toArray();
        Tolerance.assertClose(expected, actual, OnnxRuntimeAttentionBenchmark.reductionLength(e, h, length),
                "E=" + e + " H=" + h + " B=" + batch + " L=" + length + " mask=" + mask + " bias=" + bias + " threads=" + threads);
    }

    @Test
    void modelComputesMultiHeadAttentionForEveryMask() throws OrtException {
        for (String mask : new String[]{"none", "causal", "padding"}) {
            for (boolean bias : new boolean[]{true, false}) {
                checkAgainstReference(32, 4, 2, 13, mask, bias, 1);
                checkAgainstReference(48, 3, 3, 40, mask, bias, 2);
            }
            checkAgainstReference(16, 1, 1, 1, mask, true, 1);
        }
    }

    @Test
    void attentionCoreModelComputesScaledDotProductAttention() throws OrtException {
        for (int[] hdl : new int[][]{{4, 8, 13}, {2, 32, 40}, {1, 16, 1}}) {
            int h = hdl[0], d = hdl[1], length = hdl[2];
            SplittableRandom random = new SplittableRandom(h * 100L + d + length);
            Tensor q = RandomTensors.uniform(random, 1, h, length, d);
            Tensor k = RandomTensors.uniform(random, 1, h, length, d);
            Tensor v = RandomTensors.uniform(random, 1, h, length, d);
            float[] actual;
            try (OnnxAttentionSession s = OnnxAttentionSession.attentionCore(OnnxModel.attentionCore(h, h * d), 1,
                    OnnxRuntimeAttentionCoreBenchmark.tokenMajor(q.toArray(), h, length, d),
                    OnnxRuntimeAttentionCoreBenchmark.tokenMajor(k.toArray(), h, length, d),
                    OnnxRuntimeAttentionCoreBenchmark.tokenMajor(v.toArray(), h, length, d), 1, length, h * d)) {
                s.run();
                actual = s.output();
            }
            float[] expected = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), (float) (1 / Math.sqrt(d)))
                    .output().toArray();
            Tolerance.assertClose(OnnxRuntimeAttentionCoreBenchmark.tokenMajor(expected, h, length, d), actual, d + length,
                    "H=" + h + " hd=" + d + " L=" + length);
        }
    }

    @Test
    void tokenMajorMovesEachHeadRowToItsColumns() {
        float[] headsMajor = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};    // (H=2, L=3, d=2)
        assertArrayEquals(new float[]{1, 2, 7, 8, 3, 4, 9, 10, 5, 6, 11, 12},
                OnnxRuntimeAttentionCoreBenchmark.tokenMajor(headsMajor, 2, 3, 2));
    }

    @Test
    void attentionCoreSetupAcceptsOnnxRuntime() throws OrtException {
        for (int threads = 1; threads <= 2; threads++) {
            OnnxRuntimeAttentionCoreBenchmark b = new OnnxRuntimeAttentionCoreBenchmark();
            b.heads = 4;
            b.headDim = 16;
            b.seqLen = 37;
            b.threads = threads;
            b.setUp();
            try {
                assertEquals(37 * 4 * 16, b.run().capacity());
            } finally {
                b.tearDown();
            }
        }
        assertThrows(IllegalArgumentException.class, () -> OnnxModel.attentionCore(3, 16));
    }

    @Test
    void causalAndPaddingChangeTheOutput() throws OrtException {
        int e = 16, h = 2, length = 8;
        SplittableRandom random = new SplittableRandom(5);
        float[] inW = uniform(random, 3 * e * e);
        float[] outW = uniform(random, e * e);
        float[] x = uniform(random, length * e);
        float[][] outputs = new float[3][];
        OnnxModel.Mask[] kinds = OnnxModel.Mask.values();
        for (int m = 0; m < kinds.length; m++) {
            byte[] model = OnnxModel.multiHeadAttention(e, h, kinds[m], inW, null, outW, null);
            try (OnnxAttentionSession s = new OnnxAttentionSession(model, kinds[m], 1, x, 1, length, e,
                    kinds[m] == OnnxModel.Mask.PADDING ? Inputs.paddedKeys(1, length) : null)) {
                s.run();
                outputs[m] = s.output();
            }
        }
        int lastRow = (length - 1) * e;
        assertArrayEquals(Arrays.copyOfRange(outputs[0], lastRow, lastRow + e),
                Arrays.copyOfRange(outputs[1], lastRow, lastRow + e), 1e-5f, "the last query sees every key either way");
        assertTrue(Math.abs(outputs[0][0] - outputs[1][0]) > 1e-4, "the first query sees only itself when causal");
        assertTrue(Math.abs(outputs[0][0] - outputs[2][0]) > 1e-4, "padding removes keys from every query");
    }

    @Test
    void seededWeightsAreTheSeededModuleWeights() {
        int e = 64, h = 8, length = 10;
        float[][] w = OnnxRuntimeAttentionBenchmark.seededWeights(e, h, OnnxRuntimeAttentionBenchmark.WEIGHT_SEED);
        assertEquals(3 * e * e, w[0].length);
        assertEquals(e * e, w[1].length);
        Tensor x = Inputs.uniform(new SplittableRandom(7), 2, length, e);
        MultiHeadAttention seeded = MultiHeadAttention.builder(e, h).seed(OnnxRuntimeAttentionBenchmark.WEIGHT_SEED).threads(1).build();
        MultiHeadAttention imported = MultiHeadAttention.builder(e, h).pytorchWeights(w[0], null, w[1], null).threads(1).build();
        assertArrayEquals(seeded.forward(x, AttentionMask.causal()).toArray(), imported.forward(x, AttentionMask.causal()).toArray());
        MultiHeadAttention otherSeed = MultiHeadAttention.builder(e, h).seed(43).threads(1).build();
        assertTrue(!Arrays.equals(otherSeed.forward(x, AttentionMask.none()).toArray(), imported.forward(x, AttentionMask.none()).toArray()));
    }

    @Test
    void setupAcceptsOnnxRuntimeForEveryMaskAndThreadCount() throws OrtException {
        for (String mask : new String[]{"none", "causal", "padding"}) {
            for (int threads = 1; threads <= 2; threads++) {
                OnnxRuntimeAttentionBenchmark b = new OnnxRuntimeAttentionBenchmark();
                b.numHeads = 4;
                b.seqLen = 24;
                b.mask = mask;
                b.embedDim = 64;
                b.batch = 2;
                b.threads = threads;
                b.setUp();
                try {
                    assertEquals(2 * 24 * 64, b.run().capacity());
                } finally {
                    b.tearDown();
                }
            }
        }
    }

    @Test
    void outputCheckRejectsOneWrongElement() {
        float[] y = uniform(new SplittableRandom(3), 100);
        int n = OnnxRuntimeAttentionBenchmark.reductionLength(64, 4, 24);
        OnnxRuntimeAttentionBenchmark.checkSameOutput(y, y.clone(), n, "same");
        float[] off = y.clone();
        off[57] += 1e-2f;
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> OnnxRuntimeAttentionBenchmark.checkSameOutput(y, off, n, "perturbed"));
        assertTrue(e.getMessage().contains("y[57]"), e.getMessage());
        assertThrows(IllegalStateException.class,
                () -> OnnxRuntimeAttentionBenchmark.checkSameOutput(y, Arrays.copyOf(y, 99), n, "short"));
    }

    @Test
    void protoWriterEncodesTheWireFormat() {
        HexFormat hex = HexFormat.of();
        assertEquals("089601", hex.formatHex(new ProtoWriter().varint(1, 150).toByteArray()));
        assertEquals("10ffffffffffffffffff01", hex.formatHex(new ProtoWriter().varint(2, -1).toByteArray()));
        assertEquals("1d0000803f", hex.formatHex(new ProtoWriter().fixed32(3, 1f).toByteArray()));
        assertEquals("2203ac0102", hex.formatHex(new ProtoWriter().packedVarints(4, 172, 2).toByteArray()));
        assertEquals("a2060161", hex.formatHex(new ProtoWriter().string(100, "a").toByteArray()));
        ProtoWriter inner = new ProtoWriter().varint(1, 1);
        assertEquals("2a020801", hex.formatHex(new ProtoWriter().message(5, inner).toByteArray()));
    }

    @Test
    void modelRejectsBadArguments() {
        float[] w = new float[3 * 16 * 16];
        float[] o = new float[16 * 16];
        assertThrows(IllegalArgumentException.class, () -> OnnxModel.multiHeadAttention(16, 3, OnnxModel.Mask.NONE, w, null, o, null));
        assertThrows(IllegalArgumentException.class, () -> OnnxModel.multiHeadAttention(16, 4, OnnxModel.Mask.NONE, o, null, o, null));
        assertThrows(IllegalArgumentException.class,
                () -> OnnxModel.multiHeadAttention(16, 4, OnnxModel.Mask.NONE, w, new float[48], o, null));
        assertThrows(IllegalArgumentException.class, () -> OnnxModel.Mask.of("alibi"));
        byte[] model = OnnxModel.multiHeadAttention(16, 4, OnnxModel.Mask.PADDING, w, null, o, null);
        float[] x = new float[2 * 16];
        assertThrows(IllegalArgumentException.class,
                () -> new OnnxAttentionSession(model, OnnxModel.Mask.PADDING, 1, x, 1, 2, 16, null));
        assertThrows(IllegalArgumentException.class,
                () -> new OnnxAttentionSession(model, OnnxModel.Mask.NONE, 1, x, 1, 2, 16, new boolean[1][2]));
        assertThrows(IllegalArgumentException.class,
                () -> new OnnxAttentionSession(model, OnnxModel.Mask.PADDING, 1, x, 1, 3, 16, new boolean[1][3]));
    }
}
