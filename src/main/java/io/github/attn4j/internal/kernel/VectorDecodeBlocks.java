package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The 4 x 2V register blocks of {@link VectorDecodeOps}' products, one panel each: B's panel
 * from {@code bt} (NR values per step), the four rows of A read in place from {@code r0 .. r3}
 * (a row may repeat), the block left row by row, NR apart, in {@code out}. One method per kind
 * of B, each small enough that C2 keeps the reduction's indices and arrays in registers (see
 * {@link VectorDecodeOps}). Each element of the block is one chain of fused multiply-adds in
 * increasing depth over the widened B values: the bits of the scalar products and, for float32
 * and half panels and INT8 values, of the micro-kernel over a decoded tile; the INT8 key block
 * follows {@link DecodeOps#int8Keys} instead.
 *
 * <p>The three 16-bit blocks differ only in their widening and stay three methods: one method
 * choosing the widening by two flags, as the product loop used to, compiled (once a JVM had run
 * all three) into loops with stack reloads, and ran its BF16 and finite F16 blocks about 8%
 * slower in the same harness. The eight stores are written out in each method too: moved into
 * a helper taking the eight vectors, they were not inlined into the F16 blocks, which then
 * boxed their vectors and ran 15 times slower (tried this session, same harness).
 */
final class VectorDecodeBlocks {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final int NR = 2 * L;

    private VectorDecodeBlocks() {
    }

    static void floatBlock(int kc, float[] a, int r0, int r1, int r2, int r3, float[] b, int bt, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            FloatVector b0 = FloatVector.fromArray(S, b, bi);
            FloatVector b1 = FloatVector.fromArray(S, b, bi + L);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
    }

    static void bf16Block(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            FloatVector b0 = VectorWiden.bf16Low(b, bi);
            FloatVector b1 = VectorWiden.bf16High(b, bi);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
    }

    static void finiteF16Block(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            FloatVector b0 = VectorWiden.finiteF16Low(b, bi);
            FloatVector b1 = VectorWiden.finiteF16High(b, bi);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
    }

    static void f16Block(int kc, float[] a, int r0, int r1, int r2, int r3, short[] b, int bt, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            FloatVector b0 = VectorWiden.f16Low(b, bi);
            FloatVector b1 = VectorWiden.f16High(b, bi);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
    }

    /**
     * Key panel at {@code bt}: per block of {@code block} depths, a chain over the bytes, then
     * {@code total = fma(part, scales[st + k * NR + j], total)} from 0, the totals held in
     * registers beside the partial sums (kept in {@code out} between blocks instead, the product
     * ran at 4.1 to 4.4 vector FMAs per ns against 4.5 to 4.8).
     */
    static void int8KeyBlock(int kc, float[] a, int r0, int r1, int r2, int r3, byte[] b, int bt,
                             float[] scales, int st, int block, float[] out) {
        FloatVector zero = FloatVector.zero(S);
        FloatVector t00 = zero, t01 = zero, t10 = zero, t11 = zero;
        FloatVector t20 = zero, t21 = zero, t30 = zero, t31 = zero;
        int bi = bt;
        for (int p0 = 0, si = st; p0 < kc; p0 += block, si += NR) {
            FloatVector c00 = zero, c01 = zero, c10 = zero, c11 = zero;
            FloatVector c20 = zero, c21 = zero, c30 = zero, c31 = zero;
            for (int p = p0, p1 = Math.min(kc, p0 + block); p < p1; p++, bi += NR) {
                FloatVector b0 = VectorWiden.low(b, bi);
                FloatVector b1 = VectorWiden.high(b, bi);
                FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
                c00 = av.fma(b0, c00);
                c01 = av.fma(b1, c01);
                av = FloatVector.broadcast(S, a[r1 + p]);
                c10 = av.fma(b0, c10);
                c11 = av.fma(b1, c11);
                av = FloatVector.broadcast(S, a[r2 + p]);
                c20 = av.fma(b0, c20);
                c21 = av.fma(b1, c21);
                av = FloatVector.broadcast(S, a[r3 + p]);
                c30 = av.fma(b0, c30);
                c31 = av.fma(b1, c31);
            }
            FloatVector s0 = FloatVector.fromArray(S, scales, si);
            FloatVector s1 = FloatVector.fromArray(S, scales, si + L);
            t00 = c00.fma(s0, t00);
            t01 = c01.fma(s1, t01);
            t10 = c10.fma(s0, t10);
            t11 = c11.fma(s1, t11);
            t20 = c20.fma(s0, t20);
            t21 = c21.fma(s1, t21);
            t30 = c30.fma(s0, t30);
            t31 = c31.fma(s1, t31);
        }
        t00.intoArray(out, 0);
        t01.intoArray(out, L);
        t10.intoArray(out, NR);
        t11.intoArray(out, NR + L);
        t20.intoArray(out, 2 * NR);
        t21.intoArray(out, 2 * NR + L);
        t30.intoArray(out, 3 * NR);
        t31.intoArray(out, 3 * NR + L);
    }

    /** Value panel at {@code bt}: B row {@code p} times {@code scales[st + p * sRow]}. */
    static void int8ValueBlock(int kc, float[] a, int r0, int r1, int r2, int r3, byte[] b, int bt,
                               float[] scales, int st, int sRow, float[] out) {
        FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
        FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
        FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
        FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
        for (int p = 0; p < kc; p++) {
            int bi = bt + p * NR;
            FloatVector s = FloatVector.broadcast(S, scales[st + p * sRow]);
            FloatVector b0 = VectorWiden.low(b, bi).mul(s);
            FloatVector b1 = VectorWiden.high(b, bi).mul(s);
            FloatVector av = FloatVector.broadcast(S, a[r0 + p]);
            c00 = av.fma(b0, c00);
            c01 = av.fma(b1, c01);
            av = FloatVector.broadcast(S, a[r1 + p]);
            c10 = av.fma(b0, c10);
            c11 = av.fma(b1, c11);
            av = FloatVector.broadcast(S, a[r2 + p]);
            c20 = av.fma(b0, c20);
            c21 = av.fma(b1, c21);
            av = FloatVector.broadcast(S, a[r3 + p]);
            c30 = av.fma(b0, c30);
            c31 = av.fma(b1, c31);
        }
        c00.intoArray(out, 0);
        c01.intoArray(out, L);
        c10.intoArray(out, NR);
        c11.intoArray(out, NR + L);
        c20.intoArray(out, 2 * NR);
        c21.intoArray(out, 2 * NR + L);
        c30.intoArray(out, 3 * NR);
        c31.intoArray(out, 3 * NR + L);
    }
}
