package io.github.attn4j.internal.kernel;

import io.github.attn4j.Precision;
import io.github.attn4j.RandomTensors;
import io.github.attn4j.StoredValues;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.internal.kernel.AttentionKernel.BK;
import static io.github.attn4j.internal.kernel.Kernels.NR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Narrow panels hand out every key and value tile exactly as float32 panels holding the rounded
 * values do, with the same non-finite flags, through appends in chunks, growth and truncation.
 */
class EncodedPanelsTest {
    private static final int[] WIDTHS = {8, 16, 40, 64, 128};
    private static final Precision[] FORMATS = {Precision.F16, Precision.BF16, Precision.INT8, Precision.INT8};

    private static EncodedPanels narrow(int format, int d, int dv, int capacity) {
        return switch (format) {
            case 0 -> HalfPanels.f16(d, dv, capacity);
            case 1 -> HalfPanels.bf16(d, dv, capacity);
            case 2 -> new Int8Panels(d, dv, capacity);
            default -> new Int8Panels(d, dv, capacity, Math.max(d, dv));     // one scale per vector
        };
    }

    private static float[] values(SplittableRandom random, int n) {
        float[] x = RandomTensors.uniformArray(random, n, 4);
        for (int i = 0; i < n; i++) {
            if (random.nextInt(200) == 0) {
                x[i] = new float[]{Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}[random.nextInt(3)];
            }
        }
        return x;
    }

    @Test
    void tilesAndFlagsEqualThoseOfFloatPanelsOfTheRoundedValues() {
        qt().withExamples(80).forAll(integers().between(0, FORMATS.length - 1), integers().between(1, 400), longs().all())
                .checkAssert((format, total, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    int d = WIDTHS[random.nextInt(WIDTHS.length)], dv = WIDTHS[random.nextInt(WIDTHS.length)];
                    int block = format == 3 ? Math.max(d, dv) : StoredValues.INT8_BLOCK;
                    Precision precision = FORMATS[format];
                    // Now and then first capacities whose arrays are G1 humongous objects (padded).
                    EncodedPanels narrow = narrow(format, d, dv, random.nextInt(5) == 0 ? 8192 : random.nextInt(50));
                    KeyValuePanels wide = new KeyValuePanels(d, dv, random.nextInt(5) == 0 ? 8192 : random.nextInt(50));
                    int steps = 1 + random.nextInt(6);
                    for (int step = 0; step < steps; step++) {
                        int count = random.nextInt(total + 1);
                        float[] k = values(random, count * d), v = values(random, count * dv);
                        narrow.append(HeadLayout.headsMajor(k, 1, 1, count, d), HeadLayout.headsMajor(v, 1, 1, count, dv), 0, 0, count);
                        wide.append(HeadLayout.headsMajor(StoredValues.of(precision, k, d, block), 1, 1, count, d),
                                HeadLayout.headsMajor(StoredValues.of(precision, v, dv, block), 1, 1, count, dv), 0, 0, count);
                        if (random.nextInt(3) == 0) {
                            int cut = random.nextInt(narrow.length() + 1);
                            narrow.truncate(cut);
                            wide.truncate(cut);
                        }
                        assertSameTiles(wide, narrow, precision + (format == 3 ? " per vector" : "") + " d=" + d + " dv=" + dv);
                    }
                });
    }

    private static void assertSameTiles(KeyValuePanels wide, EncodedPanels narrow, String what) {
        assertEquals(wide.length(), narrow.length(), what);
        KeyValueSource.Tile w = new KeyValueSource.Tile(), n = new KeyValueSource.Tile();
        int d = wide.d, dv = wide.dv;
        for (int j0 = 0; j0 < wide.length(); j0 += BK) {
            int nk = Math.min(BK, wide.length() - j0);
            String tile = what + " tile " + j0;
            assertEquals(wide.hasNonFiniteValues(j0, j0 + nk), narrow.hasNonFiniteValues(j0, j0 + nk), tile + " flag");
            wide.keys(j0, nk, w);
            narrow.keys(j0, nk, n);
            for (int j = 0; j < nk; j++) {
                for (int c = 0; c < d; c++) {
                    int at = j / NR * NR * d + c * NR + j % NR;
                    assertEquals(Float.floatToIntBits(w.data[w.offset + at]), Float.floatToIntBits(n.data[n.offset + at]),
                            tile + " key " + (j0 + j) + " depth " + c);
                }
            }
            wide.values(j0, nk, w);
            narrow.values(j0, nk, n);
            for (int j = 0; j < nk; j++) {
                for (int c = 0; c < wide.dvPad; c++) {
                    float expected = w.data[w.offset + c / NR * w.stride + j * NR + c % NR];
                    float actual = n.data[n.offset + c / NR * n.stride + j * NR + c % NR];
                    if (c < dv || Float.isFinite(actual)) {
                        assertEquals(Float.floatToIntBits(c < dv ? expected : 0f), Float.floatToIntBits(actual),
                                tile + " value " + (j0 + j) + " column " + c);
                    }
                }
            }
        }
    }

    @Test
    void truncatingInsideATileRescansItsFlag() {
        for (int format = 0; format < FORMATS.length; format++) {
            EncodedPanels narrow = narrow(format, 8, 8, 0);
            float[] v = new float[3 * BK * 8];
            v[(BK + 5) * 8 + 3] = Float.NaN;        // value 5 of the second tile
            narrow.append(HeadLayout.headsMajor(new float[v.length], 1, 1, 3 * BK, 8), HeadLayout.headsMajor(v, 1, 1, 3 * BK, 8), 0, 0, 3 * BK);
            assertEquals(true, narrow.hasNonFiniteValues(BK, 2 * BK), FORMATS[format] + " before");
            narrow.truncate(BK + 6);
            assertEquals(true, narrow.hasNonFiniteValues(BK, BK + 6), FORMATS[format] + " cut after the NaN");
            narrow.truncate(BK + 5);
            assertEquals(false, narrow.hasNonFiniteValues(BK, BK + 5), FORMATS[format] + " cut before the NaN");
            assertEquals(false, narrow.hasNonFiniteValues(0, BK), FORMATS[format] + " first tile");
        }
    }
}
