package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static io.github.attn4j.RandomTensors.uniformArray;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * 16-bit weights ({@code weightPrecision}, and weights handed over as segments of a model file's
 * bytes). The rounded weights are computed here independently of the library: F16 with the JDK's
 * {@link Float#floatToFloat16}, BF16 from its definition (8 significant bits, nearest, ties to
 * even, on doubles). Against the double-precision reference run on the rounded weights the
 * tolerance is the float32 one; against an F32 module built from the rounded weights the bits are
 * the same, since the stored values widen exactly and the GEMMs add in the same order.
 */
class WeightPrecisionTest {
    private static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** {E, H, KVH, hd, keyDim, valueDim}: stacked GQA; K over one KC block and N over several NB groups; q/k/v off the panel grid; cross-attention. */
    private static final int[][] SHAPES = {{64, 4, 2, 16, 64, 64}, {640, 10, 5, 64, 640, 640}, {36, 3, 3, 12, 36, 36},
        {48, 4, 2, 12, 24, 40}};

    /** The nearest BF16 value, ties to even: x rounded to 8 significant bits (spacing fixed below the normal range). */
    static float bf16(float x) {
        if (!Float.isFinite(x) || x == 0) {
            return x;
        }
        double ulp = Math.scalb(1.0, Math.max(Math.getExponent(x), Float.MIN_EXPONENT) - 7);
        return (float) (Math.rint(x / ulp) * ulp);
    }

    static float f16(float x) {
        return Float.float16ToFloat(Float.floatToFloat16(x));
    }

    private static float[] rounded(float[] w, Precision p) {
        float[] r = new float[w.length];
        for (int i = 0; i < w.length; i++) {
            r[i] = p == Precision.BF16 ? bf16(w[i]) : p == Precision.F16 ? f16(w[i]) : w[i];
        }
        return r;
    }

    /** Random weights wq, wk, wv, wo and biases bq, bk, bv, bo of shape {@code s}. */
    private static float[][] parameters(int[] s, SplittableRandom r) {
        int q = s[1] * s[3], kv = s[2] * s[3];
        return new float[][]{uniformArray(r, q * s[0], 0.3), uniformArray(r, kv * s[4], 0.3), uniformArray(r, kv * s[5], 0.3),
            uniformArray(r, s[0] * q, 0.3), uniformArray(r, q, 0.3), uniformArray(r, kv, 0.3), uniformArray(r, kv, 0.3),
            uniformArray(r, s[0], 0.3)};
    }

    private static MultiHeadAttentionBuilder builder(int[] s, int threads) {
        return MultiHeadAttention.builder(s[0], s[1]).kvHeads(s[2]).headDim(s[3]).keyDim(s[4]).valueDim(s[5]).threads(threads);
    }

    private static MultiHeadAttention module(int[] s, float[][] p, float[][] w, Precision precision, int threads) {
        return builder(s, threads).weights(w[0], w[1], w[2], w[3]).biases(p[4], p[5], p[6], p[7]).weightPrecision(precision).build();
    }

    private static float[][] roundedWeights(float[][] p, Precision precision) {
        return new float[][]{rounded(p[0], precision), rounded(p[1], precision), rounded(p[2], precision), rounded(p[3], precision)};
    }

    @Test
    void matchesTheReferenceOnTheRoundedWeights() {
        for (Precision precision : new Precision[]{Precision.BF16, Precision.F16}) {
            for (int[] s : SHAPES) {
                SplittableRandom r = new SplittableRandom(s[0] + s[1]);
                float[][] p = parameters(s, r);
                MultiHeadAttention m = module(s, p, p, precision, 2);
                float[][] w = roundedWeights(p, precision);
                ReferenceAttention.Parameters ref = new ReferenceAttention.Parameters(s[0], s[1], s[2], s[3], s[4], s[5],
                        (float) (1 / Math.sqrt(s[3])), w[0], w[1], w[2], w[3], p[4], p[5], p[6], p[7]);
                Tensor x = uniform(r, 2, 9, s[0]), key = uniform(r, 2, 7, s[4]), value = uniform(r, 2, 7, s[5]);
                String what = precision + " " + java.util.Arrays.toString(s);
                int n = 2 * Math.max(s[0], Math.max(s[4], s[5])) + 9 + s[3];
                Tolerance.assertClose(ReferenceAttention.multiHead(x, key, value, AttentionMask.none(), ref)
                        .output().toArray(), m.forward(x, key, value, AttentionMask.none()).toArray(), n, what);
            }
        }
    }

    @Test
    void givesTheBitsOfTheF32ModuleOnTheRoundedWeightsOnEveryThreadCount() {
        for (Precision precision : new Precision[]{Precision.BF16, Precision.F16}) {
            for (int[] s : SHAPES) {
                SplittableRandom r = new SplittableRandom(7 * s[0] + s[2]);
                float[][] p = parameters(s, r);
                MultiHeadAttention expected = module(s, p, roundedWeights(p, precision), Precision.F32, 1);
                Tensor x = uniform(r, 2, 20, s[0]), key = uniform(r, 2, 13, s[4]), value = uniform(r, 2, 13, s[5]);
                float[] cross = expected.forward(x, key, value, AttentionMask.none()).toArray();
                boolean self = s[4] == s[0] && s[5] == s[0];
                float[] prefill = self ? expected.forward(x, AttentionMask.causal()).toArray() : null;
                // Projections of 1 to 6 rows: the decode products (one row, up to four) and the
                // micro-kernel over panels widened a group at a time.
                Tensor x1 = Tensor.of(java.util.Arrays.copyOf(x.toArray(), 20 * s[0]), 1, 20, s[0]);
                int[][] steps = {{2, 1}, {1, 1}, {1, 3}, {2, 2}, {2, 3}};
                float[][] decoded = new float[steps.length][];
                for (int i = 0; self && i < steps.length; i++) {
                    decoded[i] = decode(expected, steps[i][0] == 2 ? x : x1, steps[i][1]);
                }
                for (int threads = 1; threads <= 3; threads++) {
                    MultiHeadAttention m = module(s, p, p, precision, threads);
                    String what = precision + " " + java.util.Arrays.toString(s) + " threads " + threads;
                    assertSameBits(cross, m.forward(x, key, value, AttentionMask.none()).toArray(), what + " cross");
                    if (self) {
                        assertSameBits(prefill, m.forward(x, AttentionMask.causal()).toArray(), what + " prefill");
                        for (int i = 0; i < steps.length; i++) {
                            assertSameBits(decoded[i], decode(m, steps[i][0] == 2 ? x : x1, steps[i][1]),
                                    what + " decode, batch " + steps[i][0] + ", " + steps[i][1] + " tokens per step");
                        }
                    }
                }
            }
        }
    }

    /**
     * The tokens of {@code x} decoded {@code step} at a time (projections of {@code batch * step}
     * rows, the last step shorter), outputs concatenated per row.
     */
    private static float[] decode(MultiHeadAttention m, Tensor x, int step) {
        int batch = x.dim(0), len = x.dim(1), e = x.dim(2);
        KvCache cache = m.newKvCache(batch, len);
        float[] all = x.toArray(), out = new float[all.length];
        for (int t0 = 0; t0 < len; t0 += step) {
            int n = Math.min(step, len - t0);
            float[] tokens = new float[batch * n * e];
            for (int b = 0; b < batch; b++) {
                System.arraycopy(all, (b * len + t0) * e, tokens, b * n * e, n * e);
            }
            float[] y = m.forwardCached(Tensor.of(tokens, batch, n, e), cache).toArray();
            for (int b = 0; b < batch; b++) {
                System.arraycopy(y, b * n * e, out, (b * len + t0) * e, n * e);
            }
        }
        return out;
    }

    @Test
    void segmentsOfFileBytesEqualTheFloatArrays() {
        int[] s = SHAPES[0];
        SplittableRandom r = new SplittableRandom(3);
        float[][] p = parameters(s, r);
        Tensor x = uniform(r, 1, 11, s[0]);
        try (Arena arena = Arena.ofConfined()) {
            for (Precision format : new Precision[]{Precision.BF16, Precision.F16, Precision.F32}) {
                MemorySegment[] seg = new MemorySegment[4];
                for (int i = 0; i < 4; i++) {
                    seg[i] = fileBytes(arena, p[i], format);
                }
                float[] expected = module(s, p, p, format, 2).forward(x, AttentionMask.causal()).toArray();
                MultiHeadAttention fromSegments = builder(s, 2).weights(format, seg[0], seg[1], seg[2], seg[3])
                        .biases(p[4], p[5], p[6], p[7]).build();
                assertSameBits(expected, fromSegments.forward(x, AttentionMask.causal()).toArray(), format + " segments");
            }
            // Stored at another precision: each value widened exactly, then rounded once.
            MemorySegment[] bf = new MemorySegment[4];
            for (int i = 0; i < 4; i++) {
                bf[i] = fileBytes(arena, p[i], Precision.BF16);
            }
            float[] expected = module(s, p, roundedWeights(p, Precision.BF16), Precision.F32, 1).forward(x, AttentionMask.causal()).toArray();
            MultiHeadAttention widened = builder(s, 1).weights(Precision.BF16, bf[0], bf[1], bf[2], bf[3])
                    .biases(p[4], p[5], p[6], p[7]).weightPrecision(Precision.F32).build();
            assertSameBits(expected, widened.forward(x, AttentionMask.causal()).toArray(), "BF16 segments stored as F32");
        }
    }

    /**
     * Building from 16-bit segments allocates the packed 16-bit weights and little else: no
     * float32 copy of a weight, which alone would be twice the packed bytes. Counted as the bytes
     * the building thread allocates (packing runs on it), against the float32 size of the weights;
     * the same segments stored as F32 allocate that size, which shows the count sees the packing.
     */
    @Test
    void buildingFromSixteenBitSegmentsMakesNoFloat32Copy() {
        int[] s = {256, 4, 1, 64, 256, 256};
        float[][] p = parameters(s, new SplittableRandom(8));
        long floatBytes = 4L * (p[0].length + p[1].length + p[2].length + p[3].length);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] seg = new MemorySegment[4];
            for (int i = 0; i < 4; i++) {
                seg[i] = fileBytes(arena, p[i], Precision.BF16);
            }
            for (Precision stored : new Precision[]{Precision.BF16, Precision.F32, Precision.BF16}) {
                MultiHeadAttentionBuilder b = builder(s, 1).bias(false).weights(Precision.BF16, seg[0], seg[1], seg[2], seg[3])
                        .weightPrecision(stored);
                long before = threads.getCurrentThreadAllocatedBytes();
                MultiHeadAttention m = b.build();
                double ratio = (double) (threads.getCurrentThreadAllocatedBytes() - before) / floatBytes;
                String what = "stored as " + stored + ": allocated " + ratio + " x the float32 bytes " + floatBytes;
                if (stored == Precision.BF16) {
                    assertTrue(ratio >= 0.5 && ratio <= 0.55, what);
                } else {
                    assertTrue(ratio >= 1 && ratio <= 1.05, what);
                }
                java.lang.ref.Reference.reachabilityFence(m);
            }
        }
    }

    /**
     * {@code w} as a model file stores it: little-endian values of {@code format} (rounded
     * here), in a native segment sliced at an odd byte offset, so that no element is aligned.
     */
    private static MemorySegment fileBytes(Arena arena, float[] w, Precision format) {
        int size = format == Precision.F32 ? 4 : 2;
        MemorySegment s = arena.allocate((long) size * w.length + 1).asSlice(1);
        for (int i = 0; i < w.length; i++) {
            if (format == Precision.F32) {
                s.set(FLOAT_LE, 4L * i, w[i]);
            } else if (format == Precision.F16) {
                s.set(SHORT_LE, 2L * i, Float.floatToFloat16(w[i]));
            } else {
                s.set(SHORT_LE, 2L * i, (short) (Float.floatToRawIntBits(bf16(w[i])) >>> 16));
            }
        }
        return s;
    }

    @Test
    void rejectsBadPrecisionsSizesValuesAndNulls() {
        MultiHeadAttentionBuilder b = MultiHeadAttention.builder(8, 2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.weightPrecision(Precision.INT8));
        assertTrue(e.getMessage().startsWith("precision: expected F32, BF16 or F16") && e.getMessage().endsWith("got INT8"), e.getMessage());
        MemorySegment w = MemorySegment.ofArray(new short[64]);
        e = assertThrows(IllegalArgumentException.class, () -> b.weights(Precision.INT8, w, w, w, w));
        assertTrue(e.getMessage().startsWith("format: expected F32, BF16 or F16") && e.getMessage().endsWith("got INT8"), e.getMessage());
        assertThrows(NullPointerException.class, () -> b.weightPrecision(null));
        assertThrows(NullPointerException.class, () -> b.weights(null, w, w, w, w));
        assertThrows(NullPointerException.class, () -> b.weights(Precision.BF16, w, null, w, w));

        MemorySegment short1 = MemorySegment.ofArray(new short[63]);
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2)
                .weights(Precision.BF16, w, short1, w, w).build());
        assertEquals("wk: expected byteSize 128 (2 bytes per BF16 element of (KVH*hd 8 x keyDim 8)), got byteSize 126", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2)
                .weights(Precision.F32, w, w, w, w).build());
        assertTrue(e.getMessage().startsWith("wq: expected byteSize 256 (4 bytes per F32 element"), e.getMessage());

        float[] wo = new float[64];
        wo[8 * 5 + 3] = 70000f;
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2)
                .weights(new float[64], new float[64], new float[64], wo).weightPrecision(Precision.F16).build());
        assertTrue(e.getMessage().startsWith("wo: expected values F16 can hold") && e.getMessage().endsWith("got 70000.0 at row 5, column 3"),
                e.getMessage());
        wo[8 * 5 + 3] = 65519.99f;   // rounds to 65504, the largest finite F16
        MultiHeadAttention.builder(8, 2).weights(new float[64], new float[64], new float[64], wo).weightPrecision(Precision.F16).build();
        float[] wq = new float[64];
        wq[17] = -Float.MAX_VALUE;
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2)
                .weights(wq, new float[64], new float[64], new float[64]).weightPrecision(Precision.BF16).build());
        assertTrue(e.getMessage().startsWith("wq: expected values BF16 can hold") && e.getMessage().endsWith("at row 2, column 1"),
                e.getMessage());
        // BF16 file values too large for F16 storage are rejected the same way.
        MemorySegment big = MemorySegment.ofArray(new byte[128]);
        big.set(SHORT_LE, 2 * 9, (short) (Float.floatToRawIntBits(1e5f) >>> 16));
        e = assertThrows(IllegalArgumentException.class, () -> MultiHeadAttention.builder(8, 2)
                .weights(Precision.BF16, w, big, w, w).weightPrecision(Precision.F16).build());
        assertTrue(e.getMessage().startsWith("wk: expected values F16 can hold") && e.getMessage().endsWith("at row 1, column 1"),
                e.getMessage());
    }

    private static void assertSameBits(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(expected[i]) != Float.floatToRawIntBits(actual[i])) {
                fail(what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i]);
            }
        }
    }
}
