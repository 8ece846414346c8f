package io.github.attn4j.internal.kernel;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Decides, once per JVM, which kernels attn4j runs: the Vector API kernels at some width, or the
 * scalar kernels. This class never touches {@code jdk.incubator.vector} itself, so it loads on
 * any JVM; it asks {@link VectorProbe} for the preferred width only after checking that the
 * incubator module is readable.
 *
 * <p>The vector kernels are chosen when all of these hold:
 * <ul>
 *   <li>{@code jdk.incubator.vector} is in the boot layer and readable by attn4j (the application
 *       passed {@code --add-modules jdk.incubator.vector});</li>
 *   <li>C2 is on (not {@code -Xint}, not {@code -XX:TieredStopAtLevel=1..3}): without C2 the
 *       Vector API runs as slow Java code, slower than plain scalar loops;</li>
 *   <li>the preferred float species has at least 128 bits.</li>
 * </ul>
 * The system property {@value #PROPERTY} overrides the choice: {@code scalar}, or a width in bits
 * ({@code 128}, {@code 256}, {@code 512}); {@code auto} (or no value) decides as above. A forced
 * width still needs the module; a width above the preferred one works but runs slowly, and a
 * warning says so.
 *
 * <p>On the vector path the micro-kernel's register block has six rows, or twelve on the 512-bit
 * path ({@link VectorMicroKernel} says why) except on an AMD processor of family 25 (Zen 4, read
 * from {@code /proc/cpuinfo} when the preferred width is 512 bits), which runs each 512-bit FMA
 * as two halves. The system property {@value #ROWS_PROPERTY} overrides that: {@code 6} or
 * {@code 12} at any width, {@code auto} (or no value) as above. Twelve rows need
 * 24 accumulators: at 256 bits and below they fit only in a register file of 32 vectors (AVX-512
 * at a forced narrower width, ARM). The scalar path has its own block and ignores the property.
 * The row count changes no result bit: every element of a product is the same chain of
 * multiply-adds whatever the blocking.
 *
 * <p>The decision is logged once through {@link System.Logger} (logger {@code io.github.attn4j}).
 */
public final class KernelSelection {
    /** The system property that forces a path: {@code scalar}, {@code 128}, {@code 256}, {@code 512} or {@code auto}. */
    public static final String PROPERTY = "attn4j.kernels";
    /** The system property that sets the rows of the vector register block: {@code 6}, {@code 12} or {@code auto}. */
    public static final String ROWS_PROPERTY = "attn4j.kernelRows";

    private static final String MODULE = "jdk.incubator.vector";

    /**
     * The decision: {@code bits == 0} for the scalar kernels, else the vector width in bits.
     *
     * @param bits   0 (scalar) or 128, 256, 512
     * @param rows   rows of the vector register block (6 or 12); 0 on the scalar path
     * @param reason why this path was taken, for the log line and for {@link Kernels#describe()}
     * @param level  how loudly to log it: {@code WARNING} when performance is lost
     */
    record Choice(int bits, int rows, String reason, System.Logger.Level level) {
        boolean scalar() {
            return bits == 0;
        }
    }

    /** What the JVM offers, gathered once; a pure input to {@link #decide}. */
    record Environment(String property, boolean moduleReadable, Optional<String> compilerProblem, int preferredBits,
                       String rowsProperty, boolean halfWidthFma) {
        /** An environment without {@value #ROWS_PROPERTY}, on a core with full-width 512-bit FMAs. */
        Environment(String property, boolean moduleReadable, Optional<String> compilerProblem, int preferredBits) {
            this(property, moduleReadable, compilerProblem, preferredBits, null, false);
        }
    }

    static final Choice CHOICE = choose();

    private KernelSelection() {
    }

    private static Choice choose() {
        String property = System.getProperty(PROPERTY);
        boolean readable = moduleReadable();
        int preferred = readable ? VectorProbe.preferredBits() : 0;
        // The processor matters only where twelve rows are the default: no file read elsewhere.
        Choice choice = decide(new Environment(property, readable, compilerProblem(), preferred,
                System.getProperty(ROWS_PROPERTY), preferred == 512 && isAmdFamily25()));
        System.getLogger("io.github.attn4j").log(choice.level(), "attn4j kernels: {0}",
                describe(choice));
        return choice;
    }

    /** The decision as a pure function of the environment, so every branch is testable in one JVM. */
    static Choice decide(Environment env) {
        Choice width = decideWidth(env);
        if (width.scalar()) {
            return width;
        }
        String rows = env.rowsProperty() == null ? "auto" : env.rowsProperty().trim().toLowerCase(Locale.ROOT);
        boolean halved = width.bits() == 512 && env.halfWidthFma();
        int auto = width.bits() == 512 && !halved ? 12 : 6;
        return switch (rows) {
            case "auto" -> new Choice(width.bits(), auto, !halved ? width.reason()
                    : width.reason() + ", 6 rows: AMD family 25 (Zen 4) runs each 512-bit FMA as two halves",
                    width.level());
            case "6", "12" -> new Choice(width.bits(), Integer.parseInt(rows),
                    width.reason() + ", " + ROWS_PROPERTY + "=" + rows, width.level());
            default -> new Choice(width.bits(), auto, width.reason() + "; ignored " + ROWS_PROPERTY + "="
                    + env.rowsProperty() + " (expected 6, 12 or auto)", System.Logger.Level.WARNING);
        };
    }

    private static Choice decideWidth(Environment env) {
        String forced = env.property() == null ? "auto" : env.property().trim().toLowerCase(Locale.ROOT);
        System.Logger.Level info = System.Logger.Level.INFO;
        System.Logger.Level warning = System.Logger.Level.WARNING;
        switch (forced) {
            case "scalar":
                return new Choice(0, 0, PROPERTY + "=scalar", info);
            case "128", "256", "512": {
                int bits = Integer.parseInt(forced);
                if (!env.moduleReadable()) {
                    return new Choice(0, 0, PROPERTY + "=" + bits + " asks for vectors, but " + MODULE
                            + " is not readable (add --add-modules " + MODULE + ")", warning);
                }
                if (bits > env.preferredBits()) {
                    return new Choice(bits, 0, PROPERTY + "=" + bits + ", wider than the hardware's preferred "
                            + env.preferredBits() + " bits: correct but slow", warning);
                }
                return new Choice(bits, 0, PROPERTY + "=" + bits, info);
            }
            case "auto":
                break;
            default:
                return withAuto(env, "ignored " + PROPERTY + "=" + env.property()
                        + " (expected scalar, 128, 256, 512 or auto); ", warning);
        }
        return withAuto(env, "", info);
    }

    private static Choice withAuto(Environment env, String prefix, System.Logger.Level level) {
        System.Logger.Level warning = System.Logger.Level.WARNING;
        if (!env.moduleReadable()) {
            return new Choice(0, 0, prefix + MODULE + " is not readable (add --add-modules " + MODULE
                    + " for the vector kernels)", warning);
        }
        if (env.compilerProblem().isPresent()) {
            return new Choice(0, 0, prefix + env.compilerProblem().get(), warning);
        }
        if (env.preferredBits() < 128) {
            return new Choice(0, 0, prefix + "the preferred float species has " + env.preferredBits()
                    + " bits, under 128", warning);
        }
        return new Choice(env.preferredBits(), 0, prefix + "preferred species", level);
    }

    static String describe(Choice choice) {
        String path = choice.scalar() ? "scalar"
                : "Vector API, " + choice.bits() + "-bit (" + choice.bits() / 32 + " float lanes), register block "
                + choice.rows() + " x 2 vectors";
        return path + "; " + choice.reason();
    }

    /**
     * Whether {@code /proc/cpuinfo} names an AMD processor of family 25: of those only Zen 4 has
     * AVX-512, and it runs each 512-bit FMA as two 256-bit halves, where six rows were measured
     * faster. False when the file cannot be read (not Linux) or says otherwise.
     */
    private static boolean isAmdFamily25() {
        try (var lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            List<String> head = lines.limit(40).toList();
            boolean amd = head.stream().anyMatch(l -> l.startsWith("vendor_id") && l.endsWith("AuthenticAMD"));
            boolean family25 = head.stream()
                    .anyMatch(l -> l.startsWith("cpu family") && l.replaceAll("\\D", "").equals("25"));
            return amd && family25;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean moduleReadable() {
        return ModuleLayer.boot().findModule(MODULE)
                .map(m -> KernelSelection.class.getModule().canRead(m))
                .orElse(false);
    }

    /** Why C2 is unavailable, or empty when it is on (or when the JVM does not say). */
    private static Optional<String> compilerProblem() {
        String info = System.getProperty("java.vm.info", "");
        if (info.contains("interpreted mode")) {
            return Optional.of("the JIT is off (-Xint), so Vector API code would run interpreted");
        }
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            if (bean == null) {
                return Optional.empty();
            }
            boolean tiered = Boolean.parseBoolean(bean.getVMOption("TieredCompilation").getValue());
            int stopAt = Integer.parseInt(bean.getVMOption("TieredStopAtLevel").getValue());
            if (tiered && stopAt < 4) {
                return Optional.of("C2 is off (-XX:TieredStopAtLevel=" + stopAt
                        + "), so Vector API code would not be compiled to SIMD instructions");
            }
        } catch (RuntimeException | LinkageError e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
