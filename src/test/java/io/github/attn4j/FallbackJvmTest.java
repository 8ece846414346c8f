package io.github.attn4j;

import io.github.attn4j.internal.kernel.Kernels;
import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@link FallbackProbe} in child JVMs where the vector kernels must not be used, and checks
 * that attn4j still works there (scalar path, logged once) and computes the right numbers: the
 * child's output is compared with the scalar reference computed here.
 */
class FallbackJvmTest {
    private static final long SEED = 20261123L;

    @Test
    void withoutTheIncubatorModuleTheScalarKernelsRun() throws Exception {
        Child child = run(List.of());
        assertTrue(child.path().startsWith("scalar; jdk.incubator.vector is not readable"), child.path());
        assertOneLogLine(child);
        assertMatchesReference(child.values());
    }

    @Test
    void withoutC2TheScalarKernelsRun() throws Exception {
        Child child = run(List.of("--add-modules", "jdk.incubator.vector", "-XX:TieredStopAtLevel=1"));
        assertTrue(child.path().startsWith("scalar; C2 is off"), child.path());
        assertOneLogLine(child);
        assertMatchesReference(child.values());
    }

    @Test
    void aForcedWidthIsHonoured() throws Exception {
        Child child = run(List.of("--add-modules", "jdk.incubator.vector", "-Dattn4j.kernels=128"));
        assertTrue(child.path().startsWith("Vector API, 128-bit (4 float lanes), register block 6 x 2 vectors; "
                + "attn4j.kernels=128"), child.path());
        assertMatchesReference(child.values());
    }

    /** The twelve-row register block at a width where no surefire execution runs it. */
    @Test
    void aForcedRowCountIsHonoured() throws Exception {
        Child child = run(List.of("--add-modules", "jdk.incubator.vector", "-Dattn4j.kernels=256",
                "-Dattn4j.kernelRows=12"));
        assertTrue(child.path().startsWith("Vector API, 256-bit (8 float lanes), register block 12 x 2 vectors; "
                + "attn4j.kernels=256, attn4j.kernelRows=12"), child.path());
        assertOneLogLine(child);
        assertMatchesReference(child.values());
    }

    private static void assertOneLogLine(Child child) {
        long lines = child.stderr().lines().filter(l -> l.contains("attn4j kernels: ")).count();
        assertEquals(1, lines, "log lines naming the kernel path in:\n" + child.stderr());
    }

    private static void assertMatchesReference(float[] actual) {
        float[][] p = FallbackProbe.parameters(SEED);
        int hd = FallbackProbe.E / FallbackProbe.HEADS;
        var parameters = new ReferenceAttention.Parameters(FallbackProbe.E, FallbackProbe.HEADS, FallbackProbe.KV_HEADS,
                hd, FallbackProbe.E, FallbackProbe.E, (float) (1 / Math.sqrt(hd)), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        Tensor x = FallbackProbe.input(SEED);
        float[] expected = ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), parameters).output().toArray();
        Tolerance.assertClose(expected, actual, 2 * FallbackProbe.E + FallbackProbe.LENGTH + hd, "child JVM output");
        Tolerance.assertClose(expected, FallbackProbe.compute(SEED).toArray(), 2 * FallbackProbe.E + FallbackProbe.LENGTH + hd,
                "this JVM's output (" + Kernels.describe() + ")");
    }

    private record Child(String path, float[] values, String stderr) {
    }

    /** Runs the probe on this JVM's java binary with only the test and main classes on the class path. */
    private static Child run(List<String> jvmOptions) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        String classPath = location(FallbackProbe.class) + File.pathSeparator + location(MultiHeadAttention.class);
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, FallbackProbe.class.getName(), Long.toString(SEED)));
        Path errFile = Files.createTempFile("attn4j-probe", ".err");
        try {
            Process process = new ProcessBuilder(command).redirectError(errFile.toFile()).start();
            process.getOutputStream().close();
            String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
            String err = Files.readString(errFile);
            return parse(command, process.exitValue(), stdout, err);
        } finally {
            Files.deleteIfExists(errFile);
        }
    }

    private static Child parse(List<String> command, int exitValue, String stdout, String err) {
        assertEquals(0, exitValue, "child JVM failed: " + command + "\n" + err);
        List<String> lines = stdout.lines().toList();
        float[] values = new float[lines.size() - 1];
        for (int i = 1; i < lines.size(); i++) {
            values[i - 1] = Float.parseFloat(lines.get(i));
        }
        return new Child(lines.get(0), values, err);
    }

    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
