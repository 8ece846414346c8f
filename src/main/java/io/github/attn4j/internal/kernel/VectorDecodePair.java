package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import static io.github.attn4j.internal.kernel.VectorWiden.high;
import static io.github.attn4j.internal.kernel.VectorWiden.low;

/**
 * The narrow {@link VectorDecodeOps} products for two rows of A: a decode step with two query
 * rows per key/value head (Gemma 2 and 3), and F16 weights under two rows of a projection (two
 * tokens or conversations decoded at once, {@link #f16Weights}). The 4-row loops would compute
 * two rows that are never stored; these hold two rows of two panels at a time in the same 8
 * accumulators, widening each panel's B row once for both rows (two broadcasts of A per step).
 * Each element of C is still one chain of fused multiply-adds in increasing p over the same
 * widened B values, so the bits are those of the 4-row loops. Each method covers {@code pairs} pairs of full panels
 * ({@code 2 * pairs} panels from {@code bOff}); row 1 of A is {@code lda} after row 0, row 1 of C
 * {@code ldc} after row 0. As in {@link VectorDecodeRow}, the stores are written out and INT8
 * keys and values have methods of their own: C2 declines to inline larger methods, and what it
 * leaves out runs in the Vector API's Java fallback. BF16 and finite F16 share {@link #half}
 * (four widenings per step): in one JVM running both, it took 0.99 to 1.01x the time of two
 * separate methods ({@code SideBySide decode:P:L:1:16}).
 */
final class VectorDecodePair {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;

    private VectorDecodePair() {
    }

    /** BF16 panels, or ({@code bf16} false) F16 panels that hold no infinity or NaN. */
    static void half(boolean bf16, int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int pairs,
                     float[] c, int cOff, int ldc, boolean accumulate) {
        int a1 = aOff + lda;
        for (int g = 0; g < pairs; g++) {
            int b0 = bOff + 2 * g * bStride, b1 = b0 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                FloatVector x00 = bf16 ? VectorWiden.bf16Low(b, b0 + o) : VectorWiden.finiteF16Low(b, b0 + o);
                FloatVector x01 = bf16 ? VectorWiden.bf16High(b, b0 + o) : VectorWiden.finiteF16High(b, b0 + o);
                FloatVector x10 = bf16 ? VectorWiden.bf16Low(b, b1 + o) : VectorWiden.finiteF16Low(b, b1 + o);
                FloatVector x11 = bf16 ? VectorWiden.bf16High(b, b1 + o) : VectorWiden.finiteF16High(b, b1 + o);
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                c00 = av.fma(x00, c00);
                c01 = av.fma(x01, c01);
                c10 = av.fma(x10, c10);
                c11 = av.fma(x11, c11);
                av = FloatVector.broadcast(S, a[a1 + p]);
                c20 = av.fma(x00, c20);
                c21 = av.fma(x01, c21);
                c30 = av.fma(x10, c30);
                c31 = av.fma(x11, c31);
            }
            int ct = cOff + 2 * g * NR, cu = ct + ldc;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
                c20 = c20.add(FloatVector.fromArray(S, c, cu));
                c21 = c21.add(FloatVector.fromArray(S, c, cu + L));
                c30 = c30.add(FloatVector.fromArray(S, c, cu + NR));
                c31 = c31.add(FloatVector.fromArray(S, c, cu + NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, cu);
            c21.intoArray(c, cu + L);
            c30.intoArray(c, cu + NR);
            c31.intoArray(c, cu + NR + L);
        }
    }


    /**
     * F16 weight panels in column order ({@link DecodeOps#f16WeightProduct}), two rows: every
     * {@link VectorDecodeRow#F16_DEPTH} steps, the pair's next rows are widened into {@code wide}
     * by the processor's conversion ({@link HalfFloat#fromF16(short[], int, float[], int, int)}),
     * then read by both rows' chains, which stay in registers from the first step to the last.
     * So each chunk is read from memory and widened once for the two rows, where the one-row loop
     * ({@link VectorDecodeRow#f16Weights}) would do both twice. {@code wide} holds at least
     * {@code 2 * F16_DEPTH * NR} floats.
     */
    static void f16Weights(int kc, float[] a, int aOff, int lda, short[] b, int bOff, int bStride, int pairs,
                           float[] c, int cOff, int ldc, boolean accumulate, float[] wide) {
        int a1 = aOff + lda;
        int w1 = VectorDecodeRow.F16_DEPTH * NR;
        for (int g = 0; g < pairs; g++) {
            int b0 = bOff + 2 * g * bStride, b1 = b0 + bStride;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p0 = 0; p0 < kc; p0 += VectorDecodeRow.F16_DEPTH) {
                int steps = Math.min(VectorDecodeRow.F16_DEPTH, kc - p0);
                HalfFloat.fromF16(b, b0 + p0 * NR, wide, 0, steps * NR);
                HalfFloat.fromF16(b, b1 + p0 * NR, wide, w1, steps * NR);
                for (int p = 0; p < steps; p++) {
                    int o = p * NR;
                    FloatVector x00 = FloatVector.fromArray(S, wide, o);
                    FloatVector x01 = FloatVector.fromArray(S, wide, o + L);
                    FloatVector x10 = FloatVector.fromArray(S, wide, w1 + o);
                    FloatVector x11 = FloatVector.fromArray(S, wide, w1 + o + L);
                    FloatVector av = FloatVector.broadcast(S, a[aOff + p0 + p]);
                    c00 = av.fma(x00, c00);
                    c01 = av.fma(x01, c01);
                    c10 = av.fma(x10, c10);
                    c11 = av.fma(x11, c11);
                    av = FloatVector.broadcast(S, a[a1 + p0 + p]);
                    c20 = av.fma(x00, c20);
                    c21 = av.fma(x01, c21);
                    c30 = av.fma(x10, c30);
                    c31 = av.fma(x11, c31);
                }
            }
            int ct = cOff + 2 * g * NR, cu = ct + ldc;
            if (accumulate) {
                c00 = c00.add(FloatVector.fromArray(S, c, ct));
                c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
                c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
                c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
                c20 = c20.add(FloatVector.fromArray(S, c, cu));
                c21 = c21.add(FloatVector.fromArray(S, c, cu + L));
                c30 = c30.add(FloatVector.fromArray(S, c, cu + NR));
                c31 = c31.add(FloatVector.fromArray(S, c, cu + NR + L));
            }
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, cu);
            c21.intoArray(c, cu + L);
            c30.intoArray(c, cu + NR);
            c31.intoArray(c, cu + NR + L);
        }
    }

    /** Key panels, as {@link DecodeOps#int8Keys}: per block, a chain over the bytes, then total = fma(part, scales, total) from 0. */
    static void int8Keys(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int pairs,
                         float[] scales, int sOff, int sPanel, int block, float[] c, int cOff, int ldc) {
        int a1 = aOff + lda;
        FloatVector zero = FloatVector.zero(S);
        for (int g = 0; g < pairs; g++) {
            int b0 = bOff + 2 * g * bStride, b1 = b0 + bStride;
            FloatVector t00 = zero, t01 = zero, t10 = zero, t11 = zero;
            FloatVector t20 = zero, t21 = zero, t30 = zero, t31 = zero;
            for (int p0 = 0; p0 < kc; p0 += block) {
                FloatVector c00 = zero, c01 = zero, c10 = zero, c11 = zero;
                FloatVector c20 = zero, c21 = zero, c30 = zero, c31 = zero;
                int p1 = Math.min(kc, p0 + block);
                for (int p = p0; p < p1; p++) {
                    int o = p * NR;
                    FloatVector x00 = low(b, b0 + o), x01 = high(b, b0 + o);
                    FloatVector x10 = low(b, b1 + o), x11 = high(b, b1 + o);
                    FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                    c00 = av.fma(x00, c00);
                    c01 = av.fma(x01, c01);
                    c10 = av.fma(x10, c10);
                    c11 = av.fma(x11, c11);
                    av = FloatVector.broadcast(S, a[a1 + p]);
                    c20 = av.fma(x00, c20);
                    c21 = av.fma(x01, c21);
                    c30 = av.fma(x10, c30);
                    c31 = av.fma(x11, c31);
                }
                int s0 = sOff + 2 * g * sPanel + p0 / block * NR, s1 = s0 + sPanel;
                FloatVector s00 = FloatVector.fromArray(S, scales, s0), s01 = FloatVector.fromArray(S, scales, s0 + L);
                FloatVector s10 = FloatVector.fromArray(S, scales, s1), s11 = FloatVector.fromArray(S, scales, s1 + L);
                t00 = c00.fma(s00, t00);
                t01 = c01.fma(s01, t01);
                t10 = c10.fma(s10, t10);
                t11 = c11.fma(s11, t11);
                t20 = c20.fma(s00, t20);
                t21 = c21.fma(s01, t21);
                t30 = c30.fma(s10, t30);
                t31 = c31.fma(s11, t31);
            }
            int ct = cOff + 2 * g * NR, cu = ct + ldc;
            t00.intoArray(c, ct);
            t01.intoArray(c, ct + L);
            t10.intoArray(c, ct + NR);
            t11.intoArray(c, ct + NR + L);
            t20.intoArray(c, cu);
            t21.intoArray(c, cu + L);
            t30.intoArray(c, cu + NR);
            t31.intoArray(c, cu + NR + L);
        }
    }

    /** Value panels, added to C: B element {@code (p, j)} of panel {@code t} times {@code scales[sOff + p * sRow + t * NR / block]}. */
    static void int8Values(int kc, float[] a, int aOff, int lda, byte[] b, int bOff, int bStride, int pairs,
                           float[] scales, int sOff, int sRow, int block, float[] c, int cOff, int ldc) {
        int a1 = aOff + lda;
        for (int g = 0; g < pairs; g++) {
            int b0 = bOff + 2 * g * bStride, b1 = b0 + bStride;
            int t0 = sOff + 2 * g * NR / block, t1 = sOff + (2 * g + 1) * NR / block;
            FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
            FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
            FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
            FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
            for (int p = 0; p < kc; p++) {
                int o = p * NR;
                int row = p * sRow;
                FloatVector s = FloatVector.broadcast(S, scales[t0 + row]);
                FloatVector x00 = low(b, b0 + o).mul(s), x01 = high(b, b0 + o).mul(s);
                s = FloatVector.broadcast(S, scales[t1 + row]);
                FloatVector x10 = low(b, b1 + o).mul(s), x11 = high(b, b1 + o).mul(s);
                FloatVector av = FloatVector.broadcast(S, a[aOff + p]);
                c00 = av.fma(x00, c00);
                c01 = av.fma(x01, c01);
                c10 = av.fma(x10, c10);
                c11 = av.fma(x11, c11);
                av = FloatVector.broadcast(S, a[a1 + p]);
                c20 = av.fma(x00, c20);
                c21 = av.fma(x01, c21);
                c30 = av.fma(x10, c30);
                c31 = av.fma(x11, c31);
            }
            int ct = cOff + 2 * g * NR, cu = ct + ldc;
            c00 = c00.add(FloatVector.fromArray(S, c, ct));
            c01 = c01.add(FloatVector.fromArray(S, c, ct + L));
            c10 = c10.add(FloatVector.fromArray(S, c, ct + NR));
            c11 = c11.add(FloatVector.fromArray(S, c, ct + NR + L));
            c20 = c20.add(FloatVector.fromArray(S, c, cu));
            c21 = c21.add(FloatVector.fromArray(S, c, cu + L));
            c30 = c30.add(FloatVector.fromArray(S, c, cu + NR));
            c31 = c31.add(FloatVector.fromArray(S, c, cu + NR + L));
            c00.intoArray(c, ct);
            c01.intoArray(c, ct + L);
            c10.intoArray(c, ct + NR);
            c11.intoArray(c, ct + NR + L);
            c20.intoArray(c, cu);
            c21.intoArray(c, cu + L);
            c30.intoArray(c, cu + NR);
            c31.intoArray(c, cu + NR + L);
        }
    }
}
