package io.github.attn4j.internal.kernel;

import java.lang.management.ManagementFactory;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link CacheLines} against the JVM's command line and collectors (read through
 * {@code RuntimeMXBean} and {@code GarbageCollectorMXBean}, not through the flags
 * {@link CacheLines} reads): the surefire executions run this JVM with the default object
 * alignment, with {@code -XX:ObjectAlignmentInBytes=64}, and with that and compact object
 * headers, all under G1. The array header sizes are HotSpot's: 16 bytes before the first element
 * of a float, short or byte array, 12 with compact headers.
 */
class CacheLinesTest {
    private static final List<String> ARGS = ManagementFactory.getRuntimeMXBean().getInputArguments();
    private static final boolean ON_LINES = ARGS.stream().anyMatch(a -> a.matches("-XX:ObjectAlignmentInBytes=(64|128|256)"));
    private static final int HEADER = ARGS.contains("-XX:+UseCompactObjectHeaders") ? 12 : 16;
    private static final boolean G1 = ManagementFactory.getGarbageCollectorMXBeans().stream()
            .anyMatch(b -> b.getName().startsWith("G1 "));

    @Test
    void padsPutTheFirstElementOnALineExactlyWhenObjectsAreOnLines() {
        assertEquals(HEADER, CacheLines.BASE, "array header in bytes, args " + ARGS);
        assertEquals(ON_LINES ? (64 - HEADER) / 4 : 0, CacheLines.pad(Float.BYTES), "float pad");
        assertEquals(ON_LINES ? (64 - HEADER) / 2 : 0, CacheLines.pad(Short.BYTES), "short pad");
        assertEquals(ON_LINES ? 64 - HEADER : 0, CacheLines.pad(Byte.BYTES), "byte pad");
        assertEquals(ON_LINES ? (64 - HEADER) / 4 : 0, CacheLines.pad(Float.BYTES, 16), "a small array is never humongous");
    }

    @Test
    void arraysOverHalfTheLargestG1RegionArePaddedUnderG1() {
        // 64 MiB: over half of any G1 region (at most 32 MiB), so a humongous object under G1.
        long elements = 16L << 20;
        assertEquals(ON_LINES || G1 ? (64 - HEADER) / 4 : 0, CacheLines.pad(Float.BYTES, elements), "float pad, G1 " + G1);
        assertEquals(ON_LINES || G1 ? (64 - HEADER) / 2 : 0, CacheLines.pad(Short.BYTES, 2 * elements), "short pad");
    }

    @Test
    void aProductOverPaddedWeightsHasTheBitsOfTheProductOverBPackedInTheCall() {
        // 384 x 1536 floats (2.25 MiB): humongous under G1 with regions of up to 4 MiB.
        int m = 37, k = 384, n = 1536;
        java.util.SplittableRandom random = new java.util.SplittableRandom(42);
        float[] a = new float[m * k], b = new float[k * n];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) random.nextGaussian();
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = (float) random.nextGaussian();
        }
        MatrixView bView = MatrixView.rowMajor(b, k, n);
        PackedMatrix packed = Gemm.pack(bView);
        assertEquals(CacheLines.pad(Float.BYTES, (long) k * n), packed.blockOffset(0, k, 0), "first packed block");
        float[] expected = new float[m * n], actual = new float[m * n];
        Gemm.multiply(MatrixView.rowMajor(a, m, k), bView, expected, 0, n, false);
        Gemm.multiply(MatrixView.rowMajor(a, m, k), packed, actual, 0, n, false, 1);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]), "element " + i);
        }
    }

    @Test
    void packedWeightsAndPanelsStartAfterThePad() {
        int pad = CacheLines.pad(Float.BYTES);   // a small matrix: not humongous
        PackedMatrix packed = Gemm.pack(MatrixView.rowMajor(new float[4 * 40], 4, 40));
        assertEquals(pad, packed.blockOffset(0, 4, 0), "first packed block");
        assertEquals(pad + 4 * Kernels.NR, packed.blockOffset(0, 4, Kernels.NR), "second panel");
        assertEquals(pad + 4 * 40 + (Kernels.NR - 40 % Kernels.NR) % Kernels.NR * 4, packed.data().length,
                "packed floats: the pad, then 4 rows of whole panels");
        KeyValuePanels panels = new KeyValuePanels(8, 8, 64);
        assertEquals(pad, panels.keyIndex(0, 0), "first key");
        assertEquals(pad, panels.valueIndex(0, 0), "first value");
        // 8192 keys of 128: 4 MiB arrays, humongous under G1 with regions of up to 8 MiB.
        KeyValuePanels large = new KeyValuePanels(128, 128, 8192);
        int lead = ON_LINES || G1 ? (64 - HEADER) / 4 : 0;
        assertEquals(lead, large.keyIndex(0, 0), "first key of a large cache, G1 " + G1);
        assertEquals(lead, large.valueIndex(0, 0), "first value of a large cache");
        assertEquals(ON_LINES || G1 ? (64 - HEADER) / 2 : 0, HalfPanels.bf16(128, 128, 8192).keyIndex(0, 0), "BF16 panels");
        assertEquals(ON_LINES || G1 ? 64 - HEADER : 0, new Int8Panels(128, 128, 8192).keyIndex(0, 0), "INT8 panels");
    }
}
