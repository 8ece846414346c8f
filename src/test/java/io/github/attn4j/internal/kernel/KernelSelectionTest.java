package io.github.attn4j.internal.kernel;

import io.github.attn4j.internal.kernel.KernelSelection.Choice;
import io.github.attn4j.internal.kernel.KernelSelection.Environment;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static java.lang.System.Logger.Level.INFO;
import static java.lang.System.Logger.Level.WARNING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every branch of {@link KernelSelection#decide}, and the path this JVM actually took. */
class KernelSelectionTest {
    private static final Optional<String> C2_ON = Optional.empty();

    @Test
    void autoTakesThePreferredWidth() {
        assertChoice(512, INFO, "preferred species", new Environment(null, true, C2_ON, 512));
        assertChoice(256, INFO, "preferred species", new Environment("auto", true, C2_ON, 256));
        assertChoice(128, INFO, "preferred species", new Environment(" AUTO ", true, C2_ON, 128));
    }

    @Test
    void autoFallsBackToScalarAndWarns() {
        assertChoice(0, WARNING, "jdk.incubator.vector is not readable", new Environment(null, false, C2_ON, 0));
        assertChoice(0, WARNING, "C2 is off", new Environment(null, true, Optional.of("C2 is off"), 512));
        assertChoice(0, WARNING, "64 bits, under 128", new Environment(null, true, C2_ON, 64));
    }

    @Test
    void thePropertyForcesAPath() {
        assertChoice(0, INFO, "attn4j.kernels=scalar", new Environment("scalar", true, C2_ON, 512));
        assertChoice(128, INFO, "attn4j.kernels=128", new Environment("128", true, C2_ON, 512));
        assertChoice(256, INFO, "attn4j.kernels=256", new Environment("256", true, Optional.of("C2 is off"), 512));
        assertChoice(512, WARNING, "wider than the hardware's preferred 256 bits", new Environment("512", true, C2_ON, 256));
        assertChoice(0, WARNING, "asks for vectors, but jdk.incubator.vector is not readable",
                new Environment("256", false, C2_ON, 0));
    }

    @Test
    void anUnknownValueIsIgnoredWithAWarning() {
        assertChoice(512, WARNING, "ignored attn4j.kernels=1024", new Environment("1024", true, C2_ON, 512));
        assertChoice(0, WARNING, "ignored attn4j.kernels=fast", new Environment("fast", false, C2_ON, 0));
    }

    @Test
    void twelveRowsOnThe512BitPathAndSixBelowUnlessThePropertySays() {
        assertRows(12, INFO, "preferred species", new Environment(null, true, C2_ON, 512, null, false));
        assertRows(6, INFO, "attn4j.kernels=256", new Environment("256", true, C2_ON, 512, "auto", false));
        assertRows(6, INFO, "preferred species", new Environment(null, true, C2_ON, 128, null, false));
        assertRows(6, INFO, "attn4j.kernelRows=6", new Environment(null, true, C2_ON, 512, " 6 ", false));
        assertRows(12, INFO, "attn4j.kernelRows=12", new Environment("256", true, C2_ON, 512, "12", false));
        assertRows(12, WARNING, "ignored attn4j.kernelRows=8 (expected 6, 12 or auto)",
                new Environment(null, true, C2_ON, 512, "8", false));
        assertRows(6, WARNING, "ignored attn4j.kernelRows=tall", new Environment(null, true, C2_ON, 256, "tall", false));
        // A Zen 4 (AMD family 25) splits 512-bit FMAs in two: six rows unless the property says twelve.
        assertRows(6, INFO, "6 rows: AMD family 25 (Zen 4)", new Environment(null, true, C2_ON, 512, null, true));
        assertRows(12, INFO, "attn4j.kernelRows=12", new Environment(null, true, C2_ON, 512, "12", true));
        assertRows(6, INFO, "attn4j.kernels=256", new Environment("256", true, C2_ON, 512, null, true));
        // The scalar path has its own block: the property does not apply, and is not mentioned.
        Choice scalar = KernelSelection.decide(new Environment("scalar", true, C2_ON, 512, "12", false));
        assertEquals(0, scalar.rows(), scalar.toString());
        assertEquals("attn4j.kernels=scalar", scalar.reason());
        assertTrue(KernelSelection.describe(new Choice(512, 12, "x", INFO)).contains("register block 12 x 2 vectors"));
    }

    /** Each surefire execution forces one path; this checks the JVM took it. */
    @Test
    void thisJvmTookTheForcedPath() {
        String forced = System.getProperty(KernelSelection.PROPERTY, "auto");
        String described = Kernels.describe();
        switch (forced) {
            case "scalar" -> assertTrue(described.startsWith("scalar; "), described);
            case "128", "256", "512" -> assertEquals(Integer.parseInt(forced), Kernels.vectorBits(), described);
            default -> assertTrue(Kernels.vectorBits() == 0 || Kernels.vectorBits() >= 128, described);
        }
        assertEquals(Kernels.vectorBits() == 0 ? ScalarMicroKernel.class : VectorMicroKernel.class, Kernels.MICRO.getClass());
        assertEquals(Kernels.vectorBits() == 0 ? ScalarRowOps.class : VectorRowOps.class, Kernels.ROWS.getClass());
        if (Kernels.vectorBits() > 0) {
            assertEquals(KernelSelection.CHOICE.rows(), Kernels.MR, described);
            boolean zen4 = described.contains("AMD family 25");
            assertEquals(System.getProperty(KernelSelection.ROWS_PROPERTY) == null && Kernels.vectorBits() == 512 && !zen4
                    ? 12 : 6, Kernels.MR, described);
        }
    }

    private static void assertRows(int rows, System.Logger.Level level, String reasonPart, Environment env) {
        Choice c = KernelSelection.decide(env);
        assertEquals(rows, c.rows(), c.toString());
        assertEquals(level, c.level(), c.toString());
        assertTrue(c.reason().contains(reasonPart), c.reason());
    }

    private static void assertChoice(int bits, System.Logger.Level level, String reasonPart, Environment env) {
        Choice c = KernelSelection.decide(env);
        assertEquals(bits, c.bits(), c.toString());
        assertEquals(level, c.level(), c.toString());
        assertTrue(c.reason().contains(reasonPart), c.reason());
    }
}
