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
 * {@link MicroKernel#block} and {@link MicroKernel#blocks} against a double-precision sum: A read
 * as rows with any leading dimension (rows past mr hold NaN, so reading them would show), B as
 * packed NR panels, every edge shape of the register block, with and without accumulation.
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

    private static final Gen<Case> CASES = cases(MR, NR);

    /** Cases for a register block of {@code rows} rows and panels {@code width} wide: every edge shape of it. */
    private static Gen<Case> cases(int rows, int width) {
        return in -> new Case(
                Generate.range(0, 70).generate(in), Generate.range(1, rows).generate(in), Generate.range(1, width).generate(in),
                Generate.pick(java.util.List.of(0, 0, 3, 17)).generate(in),
                Generate.booleans().generate(in), Generate.longRange(0, Long.MAX_VALUE).generate(in));
    }

    @Test
    void blockMatchesDoublePrecisionSum() {
        qt().withExamples(500).forAll(CASES).checkAssert(t -> check(t, 0));
    }

    /** {@link MicroKernel#blocks} over 1 to 3 panels: every panel NR wide but the last, nr wide. */
    @Test
    void blocksMatchDoublePrecisionSum() {
        qt().withExamples(500).forAll(CASES, Generate.range(1, 3)).checkAssert(this::check);
    }

    /**
     * Each element of C is one chain of fused multiply-adds from 0 in increasing p, added to C's
     * element when accumulating: the definition every path shares, so that a row gets the same
     * bits whichever register block computes it. Checked bit for bit on this JVM's micro-kernel
     * and, where the Vector API runs, on the twelve-row block at every row count: its eight-row
     * loop (7 and 8 rows), its twelve-row loop and the six-row loop below them, whichever block
     * {@link KernelSelection} chose here.
     */
    @Test
    void everyRowCountGivesTheBitsOfOneFmaChainPerElement() {
        qt().withExamples(300).forAll(CASES, Generate.range(1, 3))
                .checkAssert((t, panels) -> check(Kernels.MICRO, t, panels, true));
        if (Kernels.vectorBits() > 0) {
            MicroKernel tall = new VectorMicroKernel(VectorTallBlocks.ROWS);
            qt().withExamples(500).forAll(cases(VectorTallBlocks.ROWS, VectorMicroKernel.NR), Generate.range(1, 3))
                    .checkAssert((t, panels) -> check(tall, t, panels, true));
        }
    }

    /**
     * {@link MicroKernel#depthBlocks} on the twelve-row block, A packed by depth in micro-panels
     * of twelve rows and of eight (the tail of a block): every element has the bits of its fused
     * multiply-add chain (so those of {@link MicroKernel#blocks} on the same rows row-major), over
     * every panel width, depth, panel count and with or without accumulation; nothing outside the
     * corner is written. Vector paths only (the scalar kernel reads A row-major only).
     */
    @Test
    void depthBlocksGiveTheBitsOfOneFmaChainPerElement() {
        if (Kernels.vectorBits() == 0) {
            assertEquals(0, Kernels.MICRO.depthRows());
            return;
        }
        MicroKernel tall = new VectorMicroKernel(VectorTallBlocks.ROWS);
        assertEquals(VectorTallBlocks.ROWS, tall.depthRows());
        assertEquals(VectorTallBlocks.EIGHT_ROWS, tall.depthTailRows());
        assertEquals(0, new VectorMicroKernel(VectorMicroKernel.SHORT_ROWS).depthRows());
        assertEquals(0, new VectorMicroKernel(VectorMicroKernel.SHORT_ROWS).depthTailRows());
        for (int rows : new int[] {VectorTallBlocks.ROWS, VectorTallBlocks.EIGHT_ROWS}) {
            qt().withExamples(300).forAll(cases(rows, VectorMicroKernel.NR), Generate.range(1, 3))
                    .checkAssert((t, panels) -> checkLayout(tall, rows, t, panels, (i, p) -> p * rows + i, false));
        }
    }

    /**
     * {@link MicroKernel#strideBlocks} on the twelve-row block, A rows
     * {@link MicroKernel#TILE_STRIDE} apart (NaN between them, which would show if read): the
     * same bit-for-bit check as {@link #depthBlocksGiveTheBitsOfOneFmaChainPerElement}, with
     * depths up to and including the stride.
     */
    @Test
    void strideBlocksGiveTheBitsOfOneFmaChainPerElement() {
        if (Kernels.vectorBits() == 0) {
            assertEquals(0, Kernels.MICRO.strideRows());
            return;
        }
        MicroKernel tall = new VectorMicroKernel(VectorTallBlocks.ROWS);
        assertEquals(VectorTallBlocks.ROWS, tall.strideRows());
        assertEquals(0, new VectorMicroKernel(VectorMicroKernel.SHORT_ROWS).strideRows());
        Gen<Case> deep = cases(VectorTallBlocks.ROWS, VectorMicroKernel.NR)
                .zip(Generate.pick(java.util.List.of(0, 0, 64, 128, MicroKernel.TILE_STRIDE - 70)), (t, more) ->
                        new Case(t.kc() + more, t.mr(), t.nr(), t.ldaPad(), t.accumulate(), t.seed()));
        qt().withExamples(300).forAll(deep, Generate.range(1, 3))
                .checkAssert((t, panels) -> checkLayout(tall, VectorTallBlocks.ROWS, t, panels,
                        (i, p) -> i * MicroKernel.TILE_STRIDE + p, true));
    }

    /** Where element (i, p) of A sits, from the start of the block. */
    private interface ALayout {
        int at(int i, int p);
    }

    /**
     * One call of {@code rows} rows, {@link MicroKernel#depthBlocks} or (with {@code strided})
     * {@link MicroKernel#strideBlocks}, on A laid out by {@code layout}: every element of C has the
     * bits of its fused multiply-add chain, and nothing outside the corner is written.
     */
    private void checkLayout(MicroKernel kernel, int rows, Case t, int n, ALayout layout, boolean strided) {
        int width = kernel.nr();
        int kc = t.kc();
        SplittableRandom random = new SplittableRandom(t.seed());
        int aOff = 3;
        float[] a = new float[aOff + Math.max(rows * kc, layout.at(rows - 1, Math.max(kc - 1, 0)) + 1) + 1];
        Arrays.fill(a, Float.NaN);
        for (int i = 0; i < rows; i++) {
            for (int p = 0; p < kc; p++) {
                a[aOff + layout.at(i, p)] = RandomTensors.uniformValue(random);
            }
        }
        int bOff = 1;
        int bStride = kc * width + 5;
        int cols = (n - 1) * width + t.nr();
        float[] b = new float[bOff + n * bStride + width];
        for (int q = 0; q < n; q++) {
            for (int p = 0; p < kc; p++) {
                for (int j = 0; j < width; j++) {
                    b[bOff + q * bStride + p * width + j] = q * width + j < cols ? RandomTensors.uniformValue(random) : 0f;
                }
            }
        }
        int cOff = 2;
        int ldc = n * width + 3;
        float[] initial = new float[cOff + rows * ldc + 4];
        Arrays.fill(initial, GemmCase.SENTINEL);
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                initial[cOff + i * ldc + j] = (float) random.nextDouble();
            }
        }
        float[] c = initial.clone();
        if (strided) {
            kernel.strideBlocks(kc, a, aOff, b, bOff, bStride, n, c, cOff, ldc, t.nr(), t.accumulate());
        } else {
            kernel.depthBlocks(kc, a, aOff, rows, b, bOff, bStride, n, c, cOff, ldc, t.nr(), t.accumulate());
        }
        for (int at = 0; at < c.length; at++) {
            int i = (at - cOff) / ldc;
            int j = (at - cOff) % ldc;
            if (at < cOff || i >= rows || j >= cols) {
                assertEquals(GemmCase.SENTINEL, c[at], "written outside the " + rows + " x cols corner at " + at + " in " + t);
                continue;
            }
            float chain = 0f;
            for (int p = 0; p < kc; p++) {
                chain = Math.fma(a[aOff + layout.at(i, p)], b[bOff + j / width * bStride + p * width + j % width], chain);
            }
            float expected = t.accumulate() ? initial[at] + chain : chain;
            assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(c[at]),
                    "C(" + i + ", " + j + ") in " + t + ", " + n + " panels");
        }
    }

    private void check(Case t, int panels) {
        check(Kernels.MICRO, t, panels, false);
    }

    /**
     * Checks one case on {@code kernel}; {@code panels == 0} calls {@link MicroKernel#block} on
     * one panel, otherwise {@link MicroKernel#blocks} on {@code panels} panels {@code kc * NR + 5}
     * floats apart. {@code exact}: every element must have the bits of its fused multiply-add
     * chain; otherwise it must lie within the rounding bound of the double-precision sum.
     */
    private void check(MicroKernel kernel, Case t, int panels, boolean exact) {
        int rows = kernel.mr();
        int width = kernel.nr();
        SplittableRandom random = new SplittableRandom(t.seed());
        int n = Math.max(panels, 1);
        int aOff = 2;
        int lda = t.lda();
        // A holds the block's rows (rows past mr must not matter) and kc columns.
        float[] a = new float[aOff + rows * lda + 1];
        Arrays.fill(a, Float.NaN);
        for (int i = 0; i < t.mr(); i++) {
            for (int p = 0; p < t.kc(); p++) {
                a[aOff + i * lda + p] = RandomTensors.uniformValue(random);
            }
        }
        int bOff = 3;
        int bStride = t.kc() * width + 5;
        int cols = (n - 1) * width + t.nr();
        float[] b = new float[bOff + n * bStride + width];
        for (int q = 0; q < n; q++) {
            for (int p = 0; p < t.kc(); p++) {
                for (int j = 0; j < width; j++) {
                    b[bOff + q * bStride + p * width + j] = q * width + j < cols ? RandomTensors.uniformValue(random) : 0f;
                }
            }
        }
        int cOff = 1;
        int ldc = n * width + 7;
        float[] c = new float[cOff + rows * ldc];
        Arrays.fill(c, GemmCase.SENTINEL);
        float[] initial = c.clone();
        for (int i = 0; i < t.mr(); i++) {
            for (int j = 0; j < cols; j++) {
                initial[cOff + i * ldc + j] = (float) random.nextDouble();
            }
        }
        c = initial.clone();

        if (panels == 0) {
            kernel.block(t.kc(), a, aOff, lda, b, bOff, c, cOff, ldc, t.mr(), t.nr(), t.accumulate());
        } else {
            kernel.blocks(t.kc(), a, aOff, lda, b, bOff, bStride, n, c, cOff, ldc, t.mr(), t.nr(), t.accumulate());
        }

        double gamma = (t.kc() + 1) * 0x1p-24 / (1 - (t.kc() + 1) * 0x1p-24);
        for (int at = 0; at < c.length; at++) {
            int i = (at - cOff) / ldc;
            int j = (at - cOff) % ldc;
            if (at < cOff || i >= t.mr() || j >= cols) {
                assertEquals(GemmCase.SENTINEL, c[at], "written outside the mr x cols corner at " + at + " in " + t);
                continue;
            }
            if (exact) {
                float chain = 0f;
                for (int p = 0; p < t.kc(); p++) {
                    chain = Math.fma(a[aOff + i * lda + p], b[bOff + j / width * bStride + p * width + j % width], chain);
                }
                float expected = t.accumulate() ? initial[at] + chain : chain;
                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(c[at]), "C(" + i + ", " + j
                        + ") = " + c[at] + ", the fused multiply-add chain gives " + expected + " in " + t + ", "
                        + panels + " panels, " + kernel.mr() + "-row block");
                continue;
            }
            double sum = t.accumulate() ? initial[at] : 0;
            double abs = Math.abs(sum);
            for (int p = 0; p < t.kc(); p++) {
                double term = (double) a[aOff + i * lda + p] * b[bOff + j / width * bStride + p * width + j % width];
                sum += term;
                abs += Math.abs(term);
            }
            double err = Math.abs(c[at] - sum);
            assertTrue(err <= gamma * abs + 0x1p-53 * abs, "C(" + i + ", " + j + ") = " + c[at] + ", reference "
                    + sum + " in " + t + ", " + panels + " panels");
        }
    }
}
