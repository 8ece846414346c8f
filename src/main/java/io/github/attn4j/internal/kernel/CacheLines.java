package io.github.attn4j.internal.kernel;

import java.lang.management.ManagementFactory;

/**
 * How many elements to skip at the start of a panel array so that its panels start on 64-byte
 * cache lines, where the JVM places arrays so that this can be known.
 *
 * <p>The micro-kernels load each step's B values as whole vectors; a 512-bit load that starts off
 * a cache line reads two lines, and on an Intel Xeon (Emerald Rapids) that made the GEMM 6 to 11%
 * slower and the attention core 4 to 10% (jmh/README.md, "Panels on cache lines"). An array's
 * elements start {@link #BASE} bytes after the array, its header: 16 bytes, 12 with
 * {@code -XX:+UseCompactObjectHeaders}, 20 with {@code -XX:-UseCompressedClassPointers}, for
 * elements of up to four bytes. Where the array itself starts is known to Java code in two cases:
 * <ul>
 *   <li>{@code -XX:ObjectAlignmentInBytes=64} (or a larger multiple of 64): every object starts
 *       on a line ({@link #pad(int)}, for any array);</li>
 *   <li>G1, the default collector, allocates an object larger than half a heap region
 *       ({@code G1HeapRegionSize}) as a humongous object, which starts a region and is never
 *       moved to the middle of one ({@link #pad(int, long)}, for arrays that large: packed
 *       weights of a few MiB and more, caches created for a few thousand tokens).</li>
 * </ul>
 * Otherwise (HotSpot places objects 8 bytes apart by default), and on a JVM that does not report
 * these flags, the pad is 0. The owners of panels (packed weights, key/value panels by the size
 * of their first arrays, the GEMM's widened groups of 16-bit weights) begin their first panel
 * that many elements in; the attention core's query and score tiles are not padded.
 *
 * <p>Only where data sits changes, never the arithmetic, so results are the same bits either way.
 */
final class CacheLines {
    /** Bytes of a cache line. */
    static final int LINE = 64;
    /** Bytes from an array's start to its first element of at most four bytes, or -1 when unknown. */
    static final int BASE;
    /** Whether every object starts on a cache line ({@code ObjectAlignmentInBytes} a multiple of 64). */
    static final boolean OBJECTS_ON_LINES;
    /** Object size in bytes above which G1 allocates a humongous object, or {@code Long.MAX_VALUE} when not G1. */
    static final long HUMONGOUS_BYTES;

    static {
        int base = -1;
        boolean onLines = false;
        long humongous = Long.MAX_VALUE;
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (bean != null) {
                base = flag(bean, "UseCompactObjectHeaders", false) ? 12
                        : flag(bean, "UseCompressedClassPointers", true) ? 16 : 20;
                onLines = Integer.parseInt(bean.getVMOption("ObjectAlignmentInBytes").getValue()) % LINE == 0;
                if (flag(bean, "UseG1GC", false)) {
                    humongous = Long.parseLong(bean.getVMOption("G1HeapRegionSize").getValue()) / 2;
                }
            }
        } catch (RuntimeException | LinkageError e) {
            base = -1;
        }
        BASE = base;
        OBJECTS_ON_LINES = base >= 0 && onLines;
        HUMONGOUS_BYTES = base >= 0 && humongous > 0 ? humongous : Long.MAX_VALUE;
    }

    private CacheLines() {
    }

    /**
     * Elements of {@code elementBytes} bytes (1, 2 or 4) to leave unused at the start of any
     * array so that the next element starts a cache line: 0 unless objects are on lines.
     */
    static int pad(int elementBytes) {
        return OBJECTS_ON_LINES ? lead(elementBytes) : 0;
    }

    /**
     * {@link #pad(int)} for an array of about {@code elements} elements (the pad excluded): also
     * the pad of a G1 humongous object when the array is one.
     */
    static int pad(int elementBytes, long elements) {
        boolean humongous = BASE >= 0 && BASE + elements * elementBytes > HUMONGOUS_BYTES;
        return OBJECTS_ON_LINES || humongous ? lead(elementBytes) : 0;
    }

    private static int lead(int elementBytes) {
        return (LINE - BASE) % LINE / elementBytes;
    }

    private static boolean flag(com.sun.management.HotSpotDiagnosticMXBean bean, String name, boolean absent) {
        try {
            return Boolean.parseBoolean(bean.getVMOption(name).getValue());
        } catch (IllegalArgumentException e) {
            return absent;
        }
    }
}
