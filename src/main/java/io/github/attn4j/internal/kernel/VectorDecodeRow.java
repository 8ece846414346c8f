package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import static io.github.attn4j.internal.kernel.VectorWiden.high;
import static io.github.attn4j.internal.kernel.VectorWiden.low;

/**
 * The {@link VectorDecodeOps} products for a single row of A: a decode step of plain multi-head
 * attention (one query row per key/value head, as in Llama 2, Phi-3 or Gemma 7B). The 4-row
 * loops would compute three rows that are never stored; these hold one row of four panels at a
 * time in the same 8 accumulators (so 8 independent chains still cover the FMA latency), with
 * one broadcast of A per step instead of four. Each element of C is still one chain of fused
 * multiply-adds in increasing p over the same widened B values, so the bits are those of the
 * 4-row loops. Plain harness, not JMH (128 deep, eight panels in L1, one row, two runs): 0.8 and
 * 0.9 ns per panel step against 2.0 and 3.0 for the 4-row float32 loop, 1.6 and 2.1 against 3.3
 * and 4.2 for INT8 keys. Whole decode steps of 32 heads over 32 key/value heads of 128
 * ({@code SideBySide decode:precision:length:1:32}): 0.61x the time at 1024 float32 tokens, 0.73
 * to 0.80x with BF16 or INT8 caches of 1024 and 4096 tokens, 0.81 to 0.86x with F16.
 *
 * <p>Each method covers {@code groups} groups of four full panels ({@code 4 * groups} panels
 * from {@code bOff}, C columns from {@code cOff}; {@link #finiteF16} takes {@code pairs} of two).
 * {@link VectorDecodeOps} gives a one-row product's leading whole groups to these methods and
 * the rest (fewer than a group, and a last panel narrower than NR: the last key tile of a cache,
 * value widths such as 80 or 96) to its 4-row loop, as it does every product of more rows and
 * F16 panels that may hold an infinity or NaN. Finite F16 panels go two at a
 * time ({@link #finiteF16}): eight F16 widenings per step took a 4-panel method past C2's
 * inlining node limit, and the multiplications that were no longer inlined ran in the Vector
 * API's Java fallback (also with the mask and scale hoisted out of the loop). The stores are
 * written out in each method for the same reason: a helper taking the vectors was not inlined,
 * and boxed them.
 */
final class VectorDecodeRow {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;

    private VectorDecodeRow() {
    }

    static void floats(int kc, float[] a, int aOff, float[] b, int bOff, int bStride, int groups,
                       float[] c, int cOff, boolean accumulate) {
        for (int g = 0; g < groups; g++) {
            int b0 = bOff + 4 * g * bStride, b1 = b0 + bStride, b2 = b1 + bStride, b3 = b2 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                c00 = av.fma(FloatVector.fromArray(S, b, b0 + o), c00);
                c01 = av.fma(FloatVector.fromArray(S, b, b0 + o + L), c01);
                c10 = av.fma(FloatVector.fromArray(S, b, b1 + o), c10);
                c11 = av.fma(FloatVector.fromArray(S, b, b1 + o + L), c11);
                c20 = av.fma(FloatVector.fromArray(S, b, b2 + o), c20);
                c21 = av.fma(FloatVector.fromArray(S, b, b2 + o + L), c21);
                c30 = av.fma(FloatVector.fromArray(S, b, b3 + o), c30);
                c31 = av.fma(FloatVector.fromArray(S, b, b3 + o + L), c31);
            }
            int ct = cOff + 4 * g * NR;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
                c20 = c20.add(FloatVector.fromArray(S, c, ct + 2 * NR));
                c21 = c21.add(FloatVector.fromArray(S, c, ct + 2 * NR + L));
                c30 = c30.add(FloatVector.fromArray(S, c, ct + 3 * NR));
                c31 = c31.add(FloatVector.fromArray(S, c, ct + 3 * NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, ct + 2 * NR);
            c21.intoArray(c, ct + 2 * NR + L);
            c30.intoArray(c, ct + 3 * NR);
            c31.intoArray(c, ct + 3 * NR + L);
        }
    }

    /** BF16 panels (alone: with the F16 widenings in the same method, C2 stopped inlining at its node limit and boxed the vectors). */
    static void bf16(int kc, float[] a, int aOff, short[] b, int bOff, int bStride, int groups,
                       float[] c, int cOff, boolean accumulate) {
        for (int g = 0; g < groups; g++) {
            int b0 = bOff + 4 * g * bStride, b1 = b0 + bStride, b2 = b1 + bStride, b3 = b2 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                c00 = av.fma(VectorWiden.bf16Low(b, b0 + o), c00);
                c01 = av.fma(VectorWiden.bf16High(b, b0 + o), c01);
                c10 = av.fma(VectorWiden.bf16Low(b, b1 + o), c10);
                c11 = av.fma(VectorWiden.bf16High(b, b1 + o), c11);
                c20 = av.fma(VectorWiden.bf16Low(b, b2 + o), c20);
                c21 = av.fma(VectorWiden.bf16High(b, b2 + o), c21);
                c30 = av.fma(VectorWiden.bf16Low(b, b3 + o), c30);
                c31 = av.fma(VectorWiden.bf16High(b, b3 + o), c31);
            }
            int ct = cOff + 4 * g * NR;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
                c20 = c20.add(FloatVector.fromArray(S, c, ct + 2 * NR));
                c21 = c21.add(FloatVector.fromArray(S, c, ct + 2 * NR + L));
                c30 = c30.add(FloatVector.fromArray(S, c, ct + 3 * NR));
                c31 = c31.add(FloatVector.fromArray(S, c, ct + 3 * NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, ct + 2 * NR);
            c21.intoArray(c, ct + 2 * NR + L);
            c30.intoArray(c, ct + 3 * NR);
            c31.intoArray(c, ct + 3 * NR + L);
        }
    }

    /**
     * F16 panels that hold no infinity or NaN, two panels at a time (four accumulators): with
     * four panels, eight widenings per step took the method past C2's inlining node limit.
     */
    static void finiteF16(int kc, float[] a, int aOff, short[] b, int bOff, int bStride, int pairs,
                          float[] c, int cOff, boolean accumulate) {
        for (int g = 0; g < pairs; g++) {
            int b0 = bOff + 2 * g * bStride, b1 = b0 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                c00 = av.fma(VectorWiden.finiteF16Low(b, b0 + o), c00);
                c01 = av.fma(VectorWiden.finiteF16High(b, b0 + o), c01);
                c10 = av.fma(VectorWiden.finiteF16Low(b, b1 + o), c10);
                c11 = av.fma(VectorWiden.finiteF16High(b, b1 + o), c11);
            }
            int ct = cOff + 2 * g * NR;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
        }
    }

    /**
     * Steps of {@link #f16Weights} widened at a time: four panels of them are 4 KiB of floats at
     * NR = 32, which stay in L1 until the fused multiply-adds read them. Eight steps read F16
     * weights from memory fastest of 4, 8, 16 and 32 (jmh/README.md, "F16 weights through the
     * processor's conversion").
     */
    static final int F16_DEPTH = 8;

    /**
     * F16 weight panels in column order ({@link DecodeOps#f16WeightProduct}): every
     * {@link #F16_DEPTH} steps, the four panels' next rows are widened into {@code wide} by the
     * processor's conversion ({@link HalfFloat#fromF16(short[], int, float[], int, int)}), then
     * read by the same chains as {@link #floats}, which stay in registers from the first step to
     * the last. {@code wide} holds at least {@code 4 * F16_DEPTH * NR} floats.
     */
    static void f16Weights(int kc, float[] a, int aOff, short[] b, int bOff, int bStride, int groups,
                           float[] c, int cOff, boolean accumulate, float[] wide) {
        int w1 = F16_DEPTH * NR, w2 = 2 * w1, w3 = 3 * w1;
        for (int g = 0; g < groups; g++) {
            int b0 = bOff + 4 * g * bStride, b1 = b0 + bStride, b2 = b1 + bStride, b3 = b2 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p0 = 0; p0 < kc; p0 += F16_DEPTH) {
                int steps = Math.min(F16_DEPTH, kc - p0);
                HalfFloat.fromF16(b, b0 + p0 * NR, wide, 0, steps * NR);
                HalfFloat.fromF16(b, b1 + p0 * NR, wide, w1, steps * NR);
                HalfFloat.fromF16(b, b2 + p0 * NR, wide, w2, steps * NR);
                HalfFloat.fromF16(b, b3 + p0 * NR, wide, w3, steps * NR);
                for (int p = 0; p < steps; p++) {
                    int o = p * NR;
                    FloatVector av = FloatVector.broadcast(S, a[aOff + p0 + p]);
                    c00 = av.fma(FloatVector.fromArray(S, wide, o), c00);
                    c01 = av.fma(FloatVector.fromArray(S, wide, o + L), c01);
                    c10 = av.fma(FloatVector.fromArray(S, wide, w1 + o), c10);
                    c11 = av.fma(FloatVector.fromArray(S, wide, w1 + o + L), c11);
                    c20 = av.fma(FloatVector.fromArray(S, wide, w2 + o), c20);
                    c21 = av.fma(FloatVector.fromArray(S, wide, w2 + o + L), c21);
                    c30 = av.fma(FloatVector.fromArray(S, wide, w3 + o), c30);
                    c31 = av.fma(FloatVector.fromArray(S, wide, w3 + o + L), c31);
                }
            }
            int ct = cOff + 4 * g * NR;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
                c20 = c20.add(FloatVector.fromArray(S, c, ct + 2 * NR));
                c21 = c21.add(FloatVector.fromArray(S, c, ct + 2 * NR + L));
                c30 = c30.add(FloatVector.fromArray(S, c, ct + 3 * NR));
                c31 = c31.add(FloatVector.fromArray(S, c, ct + 3 * NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, ct + 2 * NR);
            c21.intoArray(c, ct + 2 * NR + L);
            c30.intoArray(c, ct + 3 * NR);
            c31.intoArray(c, ct + 3 * NR + L);
        }
    }

    /** Key panels, as {@link DecodeOps#int8Keys}: per block, a chain over the bytes, then total = fma(part, scales, total) from 0. */
    static void int8Keys(int kc, float[] a, int aOff, byte[] b, int bOff, int bStride, int groups,
                         float[] scales, int sOff, int sPanel, int block, float[] c, int cOff) {
        FloatVector zero = FloatVector.zero(S);
        for (int g = 0; g < groups; g++) {
            int b0 = bOff + 4 * g * bStride, b1 = b0 + bStride, b2 = b1 + bStride, b3 = b2 + bStride;
            FloatVector t00 = zero, t01 = zero, t10 = zero, t11 = zero;
            FloatVector t20 = zero, t21 = zero, t30 = zero, t31 = zero;
            for (int p0 = 0; p0 < kc; p0 += block) {
                FloatVector c00 = zero, c01 = zero, c10 = zero, c11 = zero;
                FloatVector c20 = zero, c21 = zero, c30 = zero, c31 = zero;
                int p1 = Math.min(kc, p0 + block);
                for (int p = p0; p < p1; p++) {
                    int o = p * NR;
                    FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                    c00 = av.fma(low(b, b0 + o), c00);
                    c01 = av.fma(high(b, b0 + o), c01);
                    c10 = av.fma(low(b, b1 + o), c10);
                    c11 = av.fma(high(b, b1 + o), c11);
                    c20 = av.fma(low(b, b2 + o), c20);
                    c21 = av.fma(high(b, b2 + o), c21);
                    c30 = av.fma(low(b, b3 + o), c30);
                    c31 = av.fma(high(b, b3 + o), c31);
                }
                int s0 = sOff + 4 * g * sPanel + p0 / block * NR, s1 = s0 + sPanel, s2 = s1 + sPanel, s3 = s2 + sPanel;
                t00 = c00.fma(FloatVector.fromArray(S, scales, s0), t00);
                t01 = c01.fma(FloatVector.fromArray(S, scales, s0 + L), t01);
                t10 = c10.fma(FloatVector.fromArray(S, scales, s1), t10);
                t11 = c11.fma(FloatVector.fromArray(S, scales, s1 + L), t11);
                t20 = c20.fma(FloatVector.fromArray(S, scales, s2), t20);
                t21 = c21.fma(FloatVector.fromArray(S, scales, s2 + L), t21);
                t30 = c30.fma(FloatVector.fromArray(S, scales, s3), t30);
                t31 = c31.fma(FloatVector.fromArray(S, scales, s3 + L), t31);
            }
            int ct = cOff + 4 * g * NR;
            t00.intoArray(c, ct);
            t01.intoArray(c, ct + L);
            t10.intoArray(c, ct + NR);
            t11.intoArray(c, ct + NR + L);
            t20.intoArray(c, ct + 2 * NR);
            t21.intoArray(c, ct + 2 * NR + L);
            t30.intoArray(c, ct + 3 * NR);
            t31.intoArray(c, ct + 3 * NR + L);
        }
    }

    /** Value panels, added to C: B element {@code (p, j)} of panel {@code t} times {@code scales[sOff + p * sRow + t * NR / block]}. */
    static void int8Values(int kc, float[] a, int aOff, byte[] b, int bOff, int bStride, int groups,
                           float[] scales, int sOff, int sRow, int block, float[] c, int cOff) {
        for (int g = 0; g < groups; g++) {
            int b0 = bOff + 4 * g * bStride, b1 = b0 + bStride, b2 = b1 + bStride, b3 = b2 + bStride;
            int t0 = sOff + 4 * g * NR / block, t1 = sOff + (4 * g + 1) * NR / block;
            int t2 = sOff + (4 * g + 2) * NR / block, t3 = sOff + (4 * g + 3) * NR / block;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                int row = p * sRow;
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                FloatVector s = FloatVector.broadcast(S, scales[t0 + row]);
                c00 = av.fma(low(b, b0 + o).mul(s), c00);
                c01 = av.fma(high(b, b0 + o).mul(s), c01);
                s = FloatVector.broadcast(S, scales[t1 + row]);
                c10 = av.fma(low(b, b1 + o).mul(s), c10);
                c11 = av.fma(high(b, b1 + o).mul(s), c11);
                s = FloatVector.broadcast(S, scales[t2 + row]);
                c20 = av.fma(low(b, b2 + o).mul(s), c20);
                c21 = av.fma(high(b, b2 + o).mul(s), c21);
                s = FloatVector.broadcast(S, scales[t3 + row]);
                c30 = av.fma(low(b, b3 + o).mul(s), c30);
                c31 = av.fma(high(b, b3 + o).mul(s), c31);
            }
            int ct = cOff + 4 * g * NR;
            c00 = c00.add(FloatVector.fromArray(S, c, ct));
            c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
            c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
            c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
            c20 = c20.add(FloatVector.fromArray(S, c, ct + 2 * NR));
            c21 = c21.add(FloatVector.fromArray(S, c, ct + 2 * NR + L));
            c30 = c30.add(FloatVector.fromArray(S, c, ct + 3 * NR));
            c31 = c31.add(FloatVector.fromArray(S, c, ct + 3 * NR + L));
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, ct + 2 * NR);
            c21.intoArray(c, ct + 2 * NR + L);
            c30.intoArray(c, ct + 3 * NR);
            c31.intoArray(c, ct + 3 * NR + L);
        }
    }
}
