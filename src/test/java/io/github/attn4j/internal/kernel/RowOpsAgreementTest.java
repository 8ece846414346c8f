package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.RowCases.Row;
import static io.github.attn4j.internal.kernel.RowCases.SPECIALS;
import static io.github.attn4j.internal.kernel.RowCases.assertSameBits;
import static io.github.attn4j.internal.kernel.RowCases.assertSumsAgree;
import static io.github.attn4j.internal.kernel.RowCases.assertUntouched;
import static io.github.attn4j.internal.kernel.RowCases.lengths;
import static io.github.attn4j.internal.kernel.RowCases.row;
import static io.github.attn4j.internal.kernel.RowCases.someShift;
import static io.github.attn4j.internal.kernel.RowCases.specialRate;
import static io.github.attn4j.internal.kernel.RowCases.vector;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The two implementations of {@link RowOps} side by side in one JVM, on the same random rows (in
 * the manner of Lucene's tests that run every implementation of an interface against the others):
 * {@link ScalarRowOps} against {@link VectorRowOps} at this JVM's vector width. The surefire
 * executions {@code kernels-128}, {@code kernels-256} and {@code kernels-512} force each width
 * (a width above the hardware's runs correctly, only slowly), so every width is compared; the
 * {@code kernels-scalar} execution has no vector path and skips this test.
 *
 * <p>What must agree, and how exactly:
 * <ul>
 *   <li>Every element a method writes is bit-identical (NaN compared as NaN, whatever its payload):
 *       {@link ExpFloat#exp}, {@link ExpFloat#exp2} and {@link ExpFloat#tanh} (the soft-cap) are
 *       one lane of the vector forms, and scaling, {@code fma} bias, the ALiBi distance bias and
 *       masking are single IEEE operations per element. Elements
 *       outside {@code [off, off + n)} are never written.</li>
 *   <li>{@link RowOps#max}, {@link RowOps#maxIgnoringNaN}, {@link RowOps#anyAbove}, {@link RowOps#anyNonFinite} and
 *       {@link RowOps#copyFinite} (which also copies exactly, line by line) return identical results: the
 *       maximum of the same values is exact in any order ({@code Math.max} is commutative and
 *       associative, NaN and signed zeros included).</li>
 *   <li>Sums ({@link RowOps#expShiftSum}, and the partial sums of
 *       {@link RowOps#exp2ShiftAccumulateRows} added up in index order as the caller does, in
 *       {@link Exp2RowsAgreementTest}) add the same non-negative values in different orders. A float sum of {@code N} non-negative terms in any
 *       order lies within {@code γ(N)·s} of the exact sum {@code s}, {@code γ(N) = N·u / (1 − N·u)},
 *       {@code u = 2⁻²⁴} (Higham, Accuracy and Stability of Numerical Algorithms, 4.2; every term
 *       goes through at most N − 1 roundings). So each path lies within {@code γ(N)·s} of
 *       {@code s}, and the two within {@code 2·γ(N)·s} of each other; {@code s} is computed here in
 *       double (relative error at most {@code N·2⁻⁵³}, added to the bound). Non-finite sums (a NaN
 *       or infinite term) must be identical. Sums near {@code Float.MAX_VALUE} may overflow in one
 *       order and not in the other and are not compared.</li>
 * </ul>
 * Rows mix ordinary values with NaN, infinities, signed zeros and the clamping limits of the
 * exponentials; lengths cover every size up to three vectors plus a tail, random lengths and a few
 * long rows, at odd offsets inside padded arrays.
 */
class RowOpsAgreementTest {
    private final RowOps scalar = new ScalarRowOps();

    @Test
    void expShiftSumAgrees() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EEDL);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                // rep 2: values of one order of magnitude, so that a lost or doubled term is larger than the bound
                Row r = row(random, n, rep == 2 ? 1 : 40, rep == 2 ? 0 : specialRate(random));
                float shift = rep == 1 ? someShift(random) : 0f;
                float[] xs = r.copy(), xv = r.copy();
                float ss = scalar.expShiftSum(xs, r.off(), n, shift);
                float sv = vector.expShiftSum(xv, r.off(), n, shift);
                String what = "expShiftSum n=" + n + " off=" + r.off() + " shift=" + shift;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
                assertSumsAgree(xs, r.off(), n, ss, sv, what);
            }
        }
    }

    @Test
    void maximaAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED3L);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                Row r = row(random, n, 1000, specialRate(random));
                String what = "max n=" + n + " off=" + r.off();
                float[] xs = r.copy(), xv = r.copy();
                assertSameBits(scalar.max(xs, r.off(), n), vector.max(xv, r.off(), n), what);
                assertSameBits(r.data(), xs, what + " (scalar left the row alone)");
                assertSameBits(r.data(), xv, what + " (vector left the row alone)");
            }
        }
    }

    /**
     * {@link RowOps#maxIgnoringNaN} on both paths against the definition: the largest value that
     * is not NaN, taken over the row sorted as doubles, {@code +0} for a zero of either sign,
     * {@code -Infinity} when every element is NaN or the row is empty.
     */
    @Test
    void maximaIgnoringNaNAgreeWithTheDefinition() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED7L);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 4; rep++) {
                Row r = row(random, n, 1000, rep == 3 ? 0.9 : specialRate(random));
                if (rep == 2) {
                    // Only NaN, signed zeros and -Infinity: the result must be +0 or -Infinity.
                    for (int j = 0; j < n; j++) {
                        r.data()[r.off() + j] = SPECIALS_NO_NUMBER[random.nextInt(SPECIALS_NO_NUMBER.length)];
                    }
                }
                double[] numbers = new double[n];
                int count = 0;
                for (int j = 0; j < n; j++) {
                    float v = r.data()[r.off() + j];
                    if (!Float.isNaN(v)) {
                        numbers[count++] = v;
                    }
                }
                Arrays.sort(numbers, 0, count);
                float expected = count == 0 ? Float.NEGATIVE_INFINITY
                        : numbers[count - 1] == 0 ? 0f : (float) numbers[count - 1];
                String what = "maxIgnoringNaN n=" + n + " off=" + r.off() + " rep=" + rep;
                float[] xs = r.copy(), xv = r.copy();
                assertSameBits(expected, scalar.maxIgnoringNaN(xs, r.off(), n), what + " (scalar)");
                assertSameBits(expected, vector.maxIgnoringNaN(xv, r.off(), n), what + " (vector)");
                assertSameBits(r.data(), xs, what + " (scalar left the row alone)");
                assertSameBits(r.data(), xv, what + " (vector left the row alone)");
            }
        }
    }

    private static final float[] SPECIALS_NO_NUMBER = {Float.NaN, -0f, 0f, Float.NEGATIVE_INFINITY, Float.NaN};

    @Test
    void predicatesAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED4L);
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 4; rep++) {
                Row r = row(random, n, 100, rep < 2 ? 0 : specialRate(random));
                if (rep == 1 && n > 0) {
                    // one non-finite value at a random place, in the vector body or in the tail
                    float[] bad = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
                    r.data()[r.off() + random.nextInt(n)] = bad[random.nextInt(3)];
                }
                float bound = rep == 3 ? SPECIALS[random.nextInt(SPECIALS.length)] : (float) random.nextDouble(50, 110);
                String what = "n=" + n + " off=" + r.off() + " bound=" + bound;
                assertEquals(scalar.anyAbove(r.data(), r.off(), n, bound), vector.anyAbove(r.data(), r.off(), n, bound),
                        "anyAbove " + what);
                assertEquals(scalar.anyNonFinite(r.data(), r.off(), n), vector.anyNonFinite(r.data(), r.off(), n),
                        "anyNonFinite " + what);
                // Up to three lines at a stride within the row's array (lines may overlap in the
                // source; the values around the row, specials among them, count only where read).
                int lines = 1 + random.nextInt(3);
                int room = r.data().length - r.off() - n;
                int srcStride = lines == 1 ? 0 : random.nextInt(room / (lines - 1) + 1);
                int dstStride = n + random.nextInt(3);
                boolean finite = true;
                for (int line = 0; line < lines; line++) {
                    for (int j = 0; j < n; j++) {
                        finite &= Float.isFinite(r.data()[r.off() + line * srcStride + j]);
                    }
                }
                int to = random.nextInt(4);
                String copy = what + " lines=" + lines + " strides=" + srcStride + "/" + dstStride;
                for (RowOps ops : new RowOps[] {scalar, vector}) {
                    float[] dst = new float[to + lines * dstStride + 3];
                    Arrays.fill(dst, -7f);
                    assertEquals(finite, ops.copyFinite(r.data(), r.off(), srcStride, dst, to, dstStride, lines, n),
                            ops.getClass().getSimpleName() + " copyFinite " + copy);
                    float[] expected = new float[dst.length];
                    Arrays.fill(expected, -7f);
                    for (int line = 0; line < lines; line++) {
                        System.arraycopy(r.data(), r.off() + line * srcStride, expected, to + line * dstStride, n);
                    }
                    assertSameBits(expected, dst, ops.getClass().getSimpleName() + " copyFinite " + copy);
                }
            }
        }
    }

    @Test
    void elementwiseOpsAgree() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED5L);
        float[] keepValues = {0f, -0f, 1f, 0.5f, -3f, Float.NaN, Float.NEGATIVE_INFINITY, Float.MIN_VALUE};
        for (int n : lengths(random)) {
            for (int rep = 0; rep < 3; rep++) {
                Row r = row(random, n, 30, specialRate(random));
                float factor = switch (rep) {
                    case 0 -> 1f;
                    case 1 -> (float) random.nextDouble(-8, 8);
                    default -> SPECIALS[random.nextInt(SPECIALS.length)];
                };

                float[] xs = r.copy(), xv = r.copy();
                scalar.scale(xs, r.off(), n, factor);
                vector.scale(xv, r.off(), n, factor);
                String what = "scale n=" + n + " off=" + r.off() + " factor=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
                // Into another array: the same products, nothing outside [at, at + n) written.
                int at = random.nextInt(7);
                float[] ds = new float[at + n + 5], dv = new float[at + n + 5];
                Arrays.fill(ds, 42f);
                Arrays.fill(dv, 42f);
                scalar.scaleInto(r.copy(), r.off(), n, factor, ds, at);
                vector.scaleInto(r.copy(), r.off(), n, factor, dv, at);
                assertSameBits(ds, dv, what + " into another array at " + at);
                for (int j = 0; j < ds.length; j++) {
                    float want = j >= at && j < at + n ? xs[r.off() + j - at] : 42f;
                    assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(ds[j]), what + " into, element " + j);
                }

                Row bias = row(random, n, 5, 0.1);
                xs = r.copy();
                xv = r.copy();
                scalar.addBias(xs, r.off(), n, bias.data(), bias.off(), factor);
                vector.addBias(xv, r.off(), n, bias.data(), bias.off(), factor);
                what = "addBias n=" + n + " off=" + r.off() + " at=" + bias.off() + " factor=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                xs = r.copy();
                xv = r.copy();
                scalar.add(xs, r.off(), n, bias.data(), bias.off());
                vector.add(xv, r.off(), n, bias.data(), bias.off());
                what = "add n=" + n + " off=" + r.off() + " at=" + bias.off();
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
                for (int j = 0; j < n; j++) {
                    float sum = r.data()[r.off() + j] + bias.data()[bias.off() + j];
                    assertEquals(Float.floatToRawIntBits(sum), Float.floatToRawIntBits(xs[r.off() + j]), what + ", element " + j);
                }

                float[] keep = new float[bias.data().length];
                for (int i = 0; i < keep.length; i++) {
                    keep[i] = keepValues[random.nextInt(keepValues.length)];
                }
                xs = r.copy();
                xv = r.copy();
                scalar.mask(xs, r.off(), n, keep, bias.off());
                vector.mask(xv, r.off(), n, keep, bias.off());
                what = "mask n=" + n + " off=" + r.off() + " at=" + bias.off();
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                xs = r.copy();
                xv = r.copy();
                scalar.softcap(xs, r.off(), n, factor);
                vector.softcap(xv, r.off(), n, factor);
                what = "softcap n=" + n + " off=" + r.off() + " cap=" + factor;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);

                int center = random.nextInt(-3 * n - 5, 3 * n + 5);
                xs = r.copy();
                xv = r.copy();
                scalar.addDistanceBias(xs, r.off(), n, factor, center);
                vector.addDistanceBias(xv, r.off(), n, factor, center);
                what = "addDistanceBias n=" + n + " off=" + r.off() + " slope=" + factor + " center=" + center;
                assertSameBits(xs, xv, what);
                assertUntouched(r, xs, what);
            }
        }
    }

    /**
     * {@link RowOps#transposeToPanel} on random blocks: widths around the 16-column blocks of the
     * 512-bit path (and 64 and 128), every count of keys up to a panel, strides from dense to
     * wide, odd offsets. Each path must write exactly the elements the definition names, with the
     * source's bits, and nothing else.
     */
    @Test
    void transposeToPanelAgrees() {
        RowOps vector = vector();
        SplittableRandom random = new SplittableRandom(0x5EED6L);
        int nr = Kernels.NR;
        int[] widths = {0, 1, 15, 16, 17, 31, 32, 33, 48, 64, 70, 128};
        for (int d : widths) {
            for (int count = 0; count <= nr; count++) {
                int stride = d + (random.nextBoolean() ? 0 : random.nextInt(1, 40));
                int from = random.nextInt(9), to = random.nextInt(9);
                float[] src = new float[from + Math.max(count, 1) * Math.max(stride, 1) + 5];
                for (int i = 0; i < src.length; i++) {
                    src[i] = random.nextDouble() < 0.05 ? SPECIALS[random.nextInt(SPECIALS.length)]
                            : (float) random.nextDouble(-100, 100);
                }
                float[] expected = new float[to + Math.max(d, 1) * nr + 5];
                Arrays.fill(expected, -7f);
                for (int t = 0; t < count; t++) {
                    for (int c = 0; c < d; c++) {
                        expected[to + c * nr + t] = src[from + t * stride + c];
                    }
                }
                String what = "transposeToPanel d=" + d + " count=" + count + " stride=" + stride;
                for (RowOps ops : new RowOps[] {scalar, vector}) {
                    float[] dst = new float[expected.length];
                    Arrays.fill(dst, -7f);
                    ops.transposeToPanel(src, from, stride, count, d, dst, to);
                    assertSameBits(expected, dst, ops.getClass().getSimpleName() + " " + what);
                }
            }
        }
    }
}
