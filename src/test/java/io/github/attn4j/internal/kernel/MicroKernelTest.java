package io.github.attn4j.internal.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;

import io.github.attn4j.RandomTensors;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * {@link MicroKernel#block} and {@link MicroKernel#packedBlock} against a double-precision sum: A
 * read as rows with any leading dimension or as a packed MR-row panel (rows past mr hold NaN, so
 * reading them would show), B as a packed NR panel, every edge shape of the register block, with
 * and without accumulation.
 */
class MicroKernelTest {
    private static final int MR = Kernels.MR;
    private static final int NR = Kernels.NR;

    /** One case: A rows are {@code kc + ldaPad} apart. */
    private record Case(int kc, int mr, int nr, int ldaPad, boolean accumulate, long seed) {
        int lda() {
            return kc + ldaPad;
        }
    }

    private static final Gen<Case> CASES = in -> new Case(
            Generate.range(0, 70).generate(in), Generate.range(1, MR).generate(in), Generate.range(1, NR).generate(in),
            Generate.pick(java.util.List.of(0, 0, 3, 17)).generate(in),
            Generate.booleans().generate(in), Generate.longRange(0, Long.MAX_VALUE).generate(in));

    @Test
    void blockMatchesDoublePrecisionSum() {
        qt().withExamples(500).forAll(CASES).checkAssert(t -> check(t, false));
    }

    @Test
    void packedBlockMatchesDoublePrecisionSum() {
        qt().withExamples(500).forAll(CASES).checkAssert(t -> check(t, true));
    }

    /** Checks one case; a packed A has element (i, p) at {@code aOff + p * MR + i}, whatever lda says. */
    private static void check(Case t, boolean packedA) {
        SplittableRandom random = new SplittableRandom(t.seed());
        int aOff = 2;
        int rs = packedA ? 1 : t.lda();
        int cs = packedA ? MR : 1;
        // A holds MR rows (rows past mr must not matter) and kc columns.
        float[] a = new float[aOff + (MR - 1) * rs + Math.max(0, t.kc() - 1) * cs + MR + 1];
        Arrays.fill(a, Float.NaN);
        for (int i = 0; i < MR; i++) {
            for (int p = 0; p < t.kc(); p++) {
                a[aOff + i * rs + p * cs] = i < t.mr() ? RandomTensors.uniformValue(random) : Float.NaN;
            }
        }
        int bOff = 3;
        int bRowStride = NR;
        float[] b = new float[bOff + t.kc() * bRowStride + NR];
        for (int p = 0; p < t.kc(); p++) {
            for (int j = 0; j < NR; j++) {
                b[bOff + p * bRowStride + j] = j < t.nr() ? RandomTensors.uniformValue(random) : 0f;
            }
        }
        int cOff = 1;
        int ldc = NR + 7;
        float[] c = new float[cOff + MR * ldc];
        Arrays.fill(c, GemmCase.SENTINEL);
        float[] initial = c.clone();
        for (int i = 0; i < t.mr(); i++) {
            for (int j = 0; j < t.nr(); j++) {
                initial[cOff + i * ldc + j] = (float) random.nextDouble();
            }
        }
        c = initial.clone();

        if (packedA) {
            Kernels.MICRO.packedBlock(t.kc(), a, aOff, b, bOff, c, cOff, ldc, t.mr(), t.nr(), t.accumulate());
        } else {
            Kernels.MICRO.block(t.kc(), a, aOff, rs, b, bOff, c, cOff, ldc, t.mr(), t.nr(), t.accumulate());
        }

        double gamma = (t.kc() + 1) * 0x1p-24 / (1 - (t.kc() + 1) * 0x1p-24);
        for (int at = 0; at < c.length; at++) {
            int i = (at - cOff) / ldc;
            int j = (at - cOff) % ldc;
            if (at < cOff || i >= t.mr() || j >= t.nr()) {
                assertEquals(GemmCase.SENTINEL, c[at], "written outside the mr x nr corner at " + at + " in " + t);
                continue;
            }
            double sum = t.accumulate() ? initial[at] : 0;
            double abs = Math.abs(sum);
            for (int p = 0; p < t.kc(); p++) {
                double term = (double) a[aOff + i * rs + p * cs] * b[bOff + p * bRowStride + j];
                sum += term;
                abs += Math.abs(term);
            }
            double err = Math.abs(c[at] - sum);
            assertTrue(err <= gamma * abs + 0x1p-53 * abs, "C(" + i + ", " + j + ") = " + c[at] + ", reference "
                    + sum + " in " + t + (packedA ? " (packed A)" : ""));
        }
    }
}
