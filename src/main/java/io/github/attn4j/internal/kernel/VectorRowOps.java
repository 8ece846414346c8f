package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import static io.github.attn4j.internal.kernel.ExpFloat.BIAS;
import static io.github.attn4j.internal.kernel.ExpFloat.EXP2_HI;
import static io.github.attn4j.internal.kernel.ExpFloat.EXP2_LO;
import static io.github.attn4j.internal.kernel.ExpFloat.LN2_HI;
import static io.github.attn4j.internal.kernel.ExpFloat.LN2_LO;
import static io.github.attn4j.internal.kernel.ExpFloat.LOG2E;
import static io.github.attn4j.internal.kernel.ExpFloat.MAX_ARG;
import static io.github.attn4j.internal.kernel.ExpFloat.MIN_ARG;
import static io.github.attn4j.internal.kernel.ExpFloat.P0;
import static io.github.attn4j.internal.kernel.ExpFloat.P1;
import static io.github.attn4j.internal.kernel.ExpFloat.P2;
import static io.github.attn4j.internal.kernel.ExpFloat.P3;
import static io.github.attn4j.internal.kernel.ExpFloat.P4;
import static io.github.attn4j.internal.kernel.ExpFloat.P5;
import static io.github.attn4j.internal.kernel.ExpFloat.Q1;
import static io.github.attn4j.internal.kernel.ExpFloat.Q2;
import static io.github.attn4j.internal.kernel.ExpFloat.Q3;
import static io.github.attn4j.internal.kernel.ExpFloat.Q4;
import static io.github.attn4j.internal.kernel.ExpFloat.Q5;
import static io.github.attn4j.internal.kernel.ExpFloat.Q6;
import static io.github.attn4j.internal.kernel.ExpFloat.ROUND;
import static io.github.attn4j.internal.kernel.ExpFloat.T0;
import static io.github.attn4j.internal.kernel.ExpFloat.T1;
import static io.github.attn4j.internal.kernel.ExpFloat.T2;
import static io.github.attn4j.internal.kernel.ExpFloat.T3;
import static io.github.attn4j.internal.kernel.ExpFloat.T4;
import static io.github.attn4j.internal.kernel.ExpFloat.TANH_SMALL;
import static io.github.attn4j.internal.kernel.ExpFloat.TWO_LOG2E;

/**
 * The row loops on {@link Vectors#SPECIES}; the last {@code n % LANES} elements take one masked
 * step (the loops the attention runs per row) or a scalar tail. Vector values are written inside
 * each loop body, the exponential's polynomial too, rather than passed to helpers: a helper
 * taking vectors that C2 does not inline boxes them on every call, and whether it inlines one
 * depends on what it compiled first. A grid run of session 29 caught a JMH fork in which the
 * attention's exponential went through such a helper ({@code exp2}, shared by the loop, its
 * masked tail and the soft-cap since session 28): {@code forward(.., out)} at L = 2048, causal,
 * two threads, allocated 184 MiB per call and took 41 ms against 30 (jmh/README.md, "An
 * exponential helper that C2 did not inline"). Lane sums are added in lane order, so the result
 * does not depend on the JIT's reduction order.
 */
final class VectorRowOps implements RowOps {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int L = Vectors.LANES;
    private static final float NEG_INF = Float.NEGATIVE_INFINITY;
    private static final RowOps SCALAR = new ScalarRowOps();

    @Override
    public float expShiftSum(float[] x, int off, int n, float shift) {
        FloatVector sh = FloatVector.broadcast(S, shift);
        FloatVector log2e = FloatVector.broadcast(S, LOG2E);
        FloatVector round = FloatVector.broadcast(S, ROUND);
        FloatVector sum = FloatVector.zero(S);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector arg = FloatVector.fromArray(S, x, off + j).sub(sh);
            FloatVector clamped = arg.max(MIN_ARG).min(MAX_ARG);
            FloatVector k = clamped.fma(log2e, round).sub(ROUND);
            FloatVector r = k.fma(FloatVector.broadcast(S, -LN2_HI), clamped);
            r = k.fma(FloatVector.broadcast(S, -LN2_LO), r);
            FloatVector p = r.fma(FloatVector.broadcast(S, P5), FloatVector.broadcast(S, P4));
            p = p.fma(r, FloatVector.broadcast(S, P3));
            p = p.fma(r, FloatVector.broadcast(S, P2));
            p = p.fma(r, FloatVector.broadcast(S, P1));
            p = p.fma(r, FloatVector.broadcast(S, P0));
            p = p.fma(r.mul(r), r).add(1f);
            IntVector bits = ((IntVector) k.convert(VectorOperators.F2I, 0)).add(126).lanewise(VectorOperators.LSHL, 23);
            FloatVector e = p.mul(bits.reinterpretAsFloats()).mul(2f);
            e = e.blend(0f, arg.compare(VectorOperators.LT, MIN_ARG));
            e = e.blend(Float.POSITIVE_INFINITY, arg.compare(VectorOperators.GT, MAX_ARG));
            e = e.blend(arg, arg.test(VectorOperators.IS_NAN));
            e.intoArray(x, off + j);
            sum = sum.add(e);
        }
        float total = 0f;
        for (int lane = 0; lane < L; lane++) {
            total += sum.lane(lane);
        }
        for (; j < n; j++) {
            x[off + j] = ExpFloat.exp(x[off + j] - shift);
            total += x[off + j];
        }
        return total;
    }

    @Override
    public int sumLanes() {
        return L;
    }

    /**
     * Per row, a pass of comparisons ({@link #anyAbove}), then the exponentials. The clamps of
     * {@link ExpFloat#exp2} are blends of the result, not of the argument: an argument below
     * {@code EXP2_LO} gives 0 either way (at {@code EXP2_LO} the exponent bits are 0), so the
     * bits are the same, and the comparison runs beside the arithmetic instead of ahead of it.
     * No upper clamp: the bound keeps every argument at most {@code EXP2_HI}. A tile of 48 rows
     * of 128 scores in L1 on a Zen 5 core (best of 20000): 29 ns per row as separate
     * {@code anyAbove} calls and one exponential call per row with both clamps ahead, 26 ns in one
     * loop with the clamps ahead, 21 ns like this; C2 had not inlined the one-row method (344
     * bytes of bytecode) into the rows loop. Whole attention calls 2 to 6% faster at L >= 512
     * (jmh/README.md, "The exponential pass").
     */
    @Override
    public int exp2ShiftAccumulateRows(float[] x, int off, int ld, int n, int r0, int r1, float[] shifts, float bound,
                                       float[] sums) {
        for (int r = r0; r < r1; r++) {
            int row = off + r * ld;
            float shift = shifts[r];
            if (shift == NEG_INF || bound != Float.POSITIVE_INFINITY && anyAbove(x, row, n, shift + bound)) {
                return r;
            }
            FloatVector sh = FloatVector.broadcast(S, shift);
            FloatVector sum = FloatVector.fromArray(S, sums, r * L);
            int j = 0;
            for (; j <= n - L; j += L) {
                FloatVector a = FloatVector.fromArray(S, x, row + j).sub(sh);
                VectorMask<Float> under = a.compare(VectorOperators.LT, EXP2_LO);
                FloatVector kf = a.add(ROUND);
                FloatVector rest = a.sub(kf.sub(ROUND));
                FloatVector p = rest.fma(FloatVector.broadcast(S, Q6), FloatVector.broadcast(S, Q5));
                p = p.fma(rest, FloatVector.broadcast(S, Q4));
                p = p.fma(rest, FloatVector.broadcast(S, Q3));
                p = p.fma(rest, FloatVector.broadcast(S, Q2));
                p = p.fma(rest, FloatVector.broadcast(S, Q1));
                p = p.fma(rest, FloatVector.broadcast(S, 1f));
                IntVector bits = ((IntVector) kf.reinterpretAsInts()).add(BIAS).lanewise(VectorOperators.LSHL, 23);
                FloatVector e = p.mul(bits.reinterpretAsFloats()).blend(0f, under);
                e.intoArray(x, row + j);
                sum = sum.add(e);
            }
            if (j < n) {
                // The tail in one masked step, the same lanes as the loop: lanes past n add +0
                // to their partial sums, which changes no bit (the sums are never -0), so the
                // sums are the scalar tail's.
                VectorMask<Float> tail = S.indexInRange(j, n);
                FloatVector a = FloatVector.fromArray(S, x, row + j, tail).sub(sh);
                VectorMask<Float> under = a.compare(VectorOperators.LT, EXP2_LO).or(tail.not());
                FloatVector kf = a.add(ROUND);
                FloatVector rest = a.sub(kf.sub(ROUND));
                FloatVector p = rest.fma(FloatVector.broadcast(S, Q6), FloatVector.broadcast(S, Q5));
                p = p.fma(rest, FloatVector.broadcast(S, Q4));
                p = p.fma(rest, FloatVector.broadcast(S, Q3));
                p = p.fma(rest, FloatVector.broadcast(S, Q2));
                p = p.fma(rest, FloatVector.broadcast(S, Q1));
                p = p.fma(rest, FloatVector.broadcast(S, 1f));
                IntVector bits = ((IntVector) kf.reinterpretAsInts()).add(BIAS).lanewise(VectorOperators.LSHL, 23);
                FloatVector e = p.mul(bits.reinterpretAsFloats()).blend(0f, under);
                e.intoArray(x, row + j, tail);
                sum = sum.add(e);
            }
            sum.intoArray(sums, r * L);
        }
        return r1;
    }

    @Override
    public float max(float[] x, int off, int n) {
        FloatVector m = FloatVector.broadcast(S, NEG_INF);
        int j = 0;
        for (; j <= n - L; j += L) {
            m = m.max(FloatVector.fromArray(S, x, off + j));
        }
        if (j < n) {
            VectorMask<Float> tail = S.indexInRange(j, n);
            m = m.max(FloatVector.fromArray(S, x, off + j, tail).blend(NEG_INF, tail.not()));
        }
        return m.reduceLanes(VectorOperators.MAX);
    }

    /**
     * Lane-wise compare and blend (NaN is never greater), then the lanes' maximum as integers:
     * with the magnitude bits of negative floats flipped, signed integer order is the order of
     * the floats that are not NaN, so the reduction is one integer {@code MAX} instead of the
     * float {@code MAX}'s NaN and signed-zero handling at every step. Adding {@code +0} turns a
     * {@code -0} result into {@code +0}, as the scalar path does.
     */
    @Override
    public float maxIgnoringNaN(float[] x, int off, int n) {
        FloatVector m = FloatVector.broadcast(S, NEG_INF);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector v = FloatVector.fromArray(S, x, off + j);
            m = m.blend(v, v.compare(VectorOperators.GT, m));
        }
        if (j < n) {
            VectorMask<Float> tail = S.indexInRange(j, n);
            FloatVector v = FloatVector.fromArray(S, x, off + j, tail);
            m = m.blend(v, v.compare(VectorOperators.GT, m, tail));
        }
        IntVector bits = (IntVector) m.reinterpretAsInts();
        int key = bits.lanewise(VectorOperators.XOR, bits.lanewise(VectorOperators.ASHR, 31).and(0x7fffffff))
                .reduceLanes(VectorOperators.MAX);
        return Float.intBitsToFloat(key ^ ((key >> 31) & 0x7fffffff)) + 0f;
    }

    @Override
    public boolean anyAbove(float[] x, int off, int n, float bound) {
        FloatVector b = FloatVector.broadcast(S, bound);
        VectorMask<Float> above = S.maskAll(false);
        int j = 0;
        for (; j <= n - L; j += L) {
            above = above.or(FloatVector.fromArray(S, x, off + j).compare(VectorOperators.GT, b));
        }
        if (j < n) {
            VectorMask<Float> tail = S.indexInRange(j, n);
            above = above.or(FloatVector.fromArray(S, x, off + j, tail).compare(VectorOperators.GT, b, tail));
        }
        return above.anyTrue();
    }

    @Override
    public void scaleInto(float[] x, int off, int n, float factor, float[] dst, int dstOff) {
        FloatVector f = FloatVector.broadcast(S, factor);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector.fromArray(S, x, off + j).mul(f).intoArray(dst, dstOff + j);
        }
        if (j < n) {
            VectorMask<Float> tail = S.indexInRange(j, n);
            FloatVector.fromArray(S, x, off + j, tail).mul(f).intoArray(dst, dstOff + j, tail);
        }
    }

    @Override
    public void addBias(float[] s, int off, int n, float[] bias, int at, float factor) {
        FloatVector f = FloatVector.broadcast(S, factor);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector b = FloatVector.fromArray(S, bias, at + j);
            b.fma(f, FloatVector.fromArray(S, s, off + j)).blend(NEG_INF, b.compare(VectorOperators.EQ, NEG_INF))
                    .intoArray(s, off + j);
        }
        for (; j < n; j++) {
            float b = bias[at + j];
            s[off + j] = b == NEG_INF ? NEG_INF : Math.fma(b, factor, s[off + j]);
        }
    }

    @Override
    public void add(float[] x, int off, int n, float[] y, int at) {
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector.fromArray(S, x, off + j).add(FloatVector.fromArray(S, y, at + j)).intoArray(x, off + j);
        }
        for (; j < n; j++) {
            x[off + j] += y[at + j];
        }
    }

    @Override
    public void mask(float[] s, int off, int n, float[] keep, int at) {
        int j = 0;
        for (; j <= n - L; j += L) {
            VectorMask<Float> masked = FloatVector.fromArray(S, keep, at + j).compare(VectorOperators.EQ, 0f);
            FloatVector.fromArray(S, s, off + j).blend(NEG_INF, masked).intoArray(s, off + j);
        }
        for (; j < n; j++) {
            if (keep[at + j] == 0f) {
                s[off + j] = NEG_INF;
            }
        }
    }

    @Override
    public boolean anyNonFinite(float[] x, int off, int n) {
        int j = 0;
        for (; j <= n - L; j += L) {
            // x - x is 0 for finite x and NaN for NaN and both infinities.
            FloatVector v = FloatVector.fromArray(S, x, off + j);
            if (v.sub(v).test(VectorOperators.IS_NAN).anyTrue()) {
                return true;
            }
        }
        for (; j < n; j++) {
            if (!Float.isFinite(x[off + j])) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean copyFinite(float[] src, int from, int srcStride, float[] dst, int to, int dstStride, int rows, int n) {
        // x - x is 0 for finite x and NaN for NaN and both infinities: a sum of them stays 0 only if all are finite.
        FloatVector zeros = FloatVector.zero(S);
        VectorMask<Float> tail = S.indexInRange(n - n % L, n);
        for (int r = 0; r < rows; r++) {
            int s = from + r * srcStride;
            int t = to + r * dstStride;
            int j = 0;
            for (; j <= n - L; j += L) {
                FloatVector v = FloatVector.fromArray(S, src, s + j);
                v.intoArray(dst, t + j);
                zeros = zeros.add(v.sub(v));
            }
            if (j < n) {
                // Lanes past n load as 0 and add 0.
                FloatVector v = FloatVector.fromArray(S, src, s + j, tail);
                v.intoArray(dst, t + j, tail);
                zeros = zeros.add(v.sub(v));
            }
        }
        return !zeros.test(VectorOperators.IS_NAN).anyTrue();
    }

    @Override
    public void softcap(float[] x, int off, int n, float cap) {
        FloatVector c = FloatVector.broadcast(S, cap);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector v = FloatVector.fromArray(S, x, off + j);
            FloatVector a = v.abs();
            FloatVector u = a.mul(a);
            FloatVector p = u.fma(FloatVector.broadcast(S, T4), FloatVector.broadcast(S, T3));
            p = p.fma(u, FloatVector.broadcast(S, T2));
            p = p.fma(u, FloatVector.broadcast(S, T1));
            p = p.fma(u, FloatVector.broadcast(S, T0));
            FloatVector small = a.mul(u).fma(p, a);
            // exp2(a · 2 log2 e), the steps of exp2ShiftAccumulateRows, clamped above first (a >= 0,
            // so no argument is below EXP2_LO).
            FloatVector arg = a.mul(TWO_LOG2E).min(EXP2_HI);
            FloatVector kf = arg.add(ROUND);
            FloatVector rest = arg.sub(kf.sub(ROUND));
            FloatVector q = rest.fma(FloatVector.broadcast(S, Q6), FloatVector.broadcast(S, Q5));
            q = q.fma(rest, FloatVector.broadcast(S, Q4));
            q = q.fma(rest, FloatVector.broadcast(S, Q3));
            q = q.fma(rest, FloatVector.broadcast(S, Q2));
            q = q.fma(rest, FloatVector.broadcast(S, Q1));
            q = q.fma(rest, FloatVector.broadcast(S, 1f));
            IntVector bits = ((IntVector) kf.reinterpretAsInts()).add(BIAS).lanewise(VectorOperators.LSHL, 23);
            FloatVector e = q.mul(bits.reinterpretAsFloats());
            FloatVector large = FloatVector.broadcast(S, 1f).sub(FloatVector.broadcast(S, 2f).div(e.add(1f)));
            FloatVector t = large.blend(small, a.compare(VectorOperators.LT, TANH_SMALL));
            IntVector sign = ((IntVector) v.reinterpretAsInts()).and(0x80000000);
            FloatVector signed = ((IntVector) t.reinterpretAsInts()).or(sign).reinterpretAsFloats();
            c.mul(signed).intoArray(x, off + j);
        }
        for (; j < n; j++) {
            x[off + j] = cap * ExpFloat.tanh(x[off + j]);
        }
    }

    @Override
    public void addDistanceBias(float[] s, int off, int n, float slope, int center) {
        FloatVector negSlope = FloatVector.broadcast(S, -slope);
        FloatVector iota = FloatVector.zero(S).addIndex(1);
        int j = 0;
        for (; j <= n - L; j += L) {
            FloatVector dist = FloatVector.broadcast(S, (float) center).sub(iota.add((float) j)).abs();
            negSlope.fma(dist, FloatVector.fromArray(S, s, off + j)).intoArray(s, off + j);
        }
        for (; j < n; j++) {
            s[off + j] = Math.fma(-slope, Math.abs((float) center - (float) j), s[off + j]);
        }
    }

    /**
     * Blocks of 16 lines by 16 columns in registers ({@link VectorTranspose}) when the species has
     * 16 lanes, and the columns and lines left over (or all of them, with fewer lanes) by scalar
     * copies.
     */
    @Override
    public void transposeToPanel(float[] src, int from, int stride, int count, int d, float[] dst, int to) {
        int t = 0;
        if (VectorTranspose.AVAILABLE) {
            int nr = Kernels.NR;
            for (; t <= count - 16; t += 16) {
                int line = from + t * stride;
                int c = 0;
                for (; c <= d - 16; c += 16) {
                    VectorTranspose.block(src, line + c, stride, dst, to + c * nr + t);
                }
                SCALAR.transposeToPanel(src, line + c, stride, 16, d - c, dst, to + c * nr + t);
            }
        }
        SCALAR.transposeToPanel(src, from + t * stride, stride, count - t, d, dst, to + t);
    }
}
