package io.github.attn4j.internal.kernel;

import java.lang.management.ManagementFactory;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link CacheLines} against the JVM's command line (read through {@code RuntimeMXBean}, not
 * through the flags {@link CacheLines} reads): the surefire executions run this JVM with the
 * default object alignment, with {@code -XX:ObjectAlignmentInBytes=64}, and with that and
 * compact object headers. The array header sizes are HotSpot's: 16 bytes before the first
 * element of a float, short or byte array, 12 with compact headers.
 */
class CacheLinesTest {
    private static final List<String> ARGS = ManagementFactory.getRuntimeMXBean().getInputArguments();

    @Test
    void padsPutTheFirstPanelElementOnALineExactlyWhenObjectsAreOnLines() {
        boolean onLines = ARGS.stream().anyMatch(a -> a.matches("-XX:ObjectAlignmentInBytes=(64|128|256)"));
        boolean compact = ARGS.contains("-XX:+UseCompactObjectHeaders");
        int header = compact ? 12 : 16;
        assertEquals(onLines ? header : -1, CacheLines.BASE, "array header in bytes, args " + ARGS);
        assertEquals(onLines ? (64 - header) / 4 : 0, CacheLines.pad(Float.BYTES), "float pad");
        assertEquals(onLines ? (64 - header) / 2 : 0, CacheLines.pad(Short.BYTES), "short pad");
        assertEquals(onLines ? 64 - header : 0, CacheLines.pad(Byte.BYTES), "byte pad");
    }

    @Test
    void packedWeightsAndPanelsStartAfterThePad() {
        int pad = CacheLines.pad(Float.BYTES);
        PackedMatrix packed = Gemm.pack(MatrixView.rowMajor(new float[4 * 40], 4, 40));
        assertEquals(pad, packed.blockOffset(0, 4, 0), "first packed block");
        assertEquals(pad + 4 * Kernels.NR, packed.blockOffset(0, 4, Kernels.NR), "second panel");
        assertEquals(pad + 4 * 40 + (Kernels.NR - 40 % Kernels.NR) % Kernels.NR * 4, packed.data().length,
                "packed floats: the pad, then 4 rows of whole panels");
        KeyValuePanels panels = new KeyValuePanels(8, 8, 64);
        assertEquals(pad, panels.keyIndex(0, 0), "first key");
        assertEquals(pad, panels.valueIndex(0, 0), "first value");
    }
}
