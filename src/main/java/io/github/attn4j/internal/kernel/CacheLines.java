package io.github.attn4j.internal.kernel;

import java.lang.management.ManagementFactory;

/**
 * How many elements to skip at the start of a panel array so that its panels start on 64-byte
 * cache lines, when the JVM places arrays so that this can be known.
 *
 * <p>The micro-kernels load each step's B values as whole vectors; a 512-bit load that starts off
 * a cache line reads two lines, and on an Intel Xeon (Emerald Rapids) that made the GEMM 6 to 11%
 * slower and the attention core 4 to 10% (jmh/README.md, "Panels on cache lines"). HotSpot places
 * objects {@code -XX:ObjectAlignmentInBytes} apart (8 by default), so where an array's elements
 * start within a line is unknown to Java code. With {@code -XX:ObjectAlignmentInBytes=64} (or a
 * larger multiple of 64) every array starts on a line and its elements {@link #BASE} bytes after
 * it, the array header: 16 bytes, 12 with {@code -XX:+UseCompactObjectHeaders}, 20 with
 * {@code -XX:-UseCompressedClassPointers}, for elements of up to four bytes. Then the owners of
 * panels (packed weights, key/value panels, the GEMM's widened groups of 16-bit weights) begin
 * their first panel {@link #pad} elements in. The attention core's query and score tiles are not
 * padded.
 * Otherwise, and on a JVM that does not report those flags, the pad is 0 and nothing changes.
 *
 * <p>Only where data sits changes, never the arithmetic, so results are the same bits either way.
 */
final class CacheLines {
    /** Bytes of a cache line. */
    static final int LINE = 64;
    /** Bytes from an array's start to its first element of at most four bytes, or -1 when unknown. */
    static final int BASE = arrayBase();

    private CacheLines() {
    }

    /**
     * Elements of {@code elementBytes} bytes (1, 2 or 4) to leave unused at the start of an array
     * so that the next element starts a cache line: 0 when arrays are not placed on cache lines.
     */
    static int pad(int elementBytes) {
        return BASE < 0 ? 0 : (LINE - BASE) % LINE / elementBytes;
    }

    private static int arrayBase() {
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (bean == null || Integer.parseInt(bean.getVMOption("ObjectAlignmentInBytes").getValue()) % LINE != 0) {
                return -1;
            }
            if (flag(bean, "UseCompactObjectHeaders", false)) {
                return 12;
            }
            return flag(bean, "UseCompressedClassPointers", true) ? 16 : 20;
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
    }

    private static boolean flag(com.sun.management.HotSpotDiagnosticMXBean bean, String name, boolean absent) {
        try {
            return Boolean.parseBoolean(bean.getVMOption(name).getValue());
        } catch (IllegalArgumentException e) {
            return absent;
        }
    }
}
