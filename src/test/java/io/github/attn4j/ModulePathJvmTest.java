package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * attn4j as a named module on the module path of a child JVM: a probe module that
 * {@code requires io.github.attn4j} (compiled here with javac, run with {@code -m})
 * runs {@link FallbackProbe}'s forward pass on inputs written by this test, and the output is
 * checked against the reference. Without {@code --add-modules jdk.incubator.vector} the incubator
 * module must stay out of the boot layer ({@code requires static}) and the scalar kernels run;
 * with it, the vector kernels run; with C2 off they do not ({@code jdk.management} is read).
 * The surefire JVM itself runs the tests on the class path.
 */
class ModulePathJvmTest {
    private static final long SEED = 20261124L;
    private static final String PROBE_MODULE = "attn4j.probe";

    private static final String MODULE_INFO = """
            module attn4j.probe {
                requires io.github.attn4j;
            }
            """;

    /**
     * Reads E, heads, KV heads, batch, length, 8 parameter arrays and the input; prints the
     * kernel path, the module facts, then one output element per line.
     */
    private static final String PROBE = """
            package attn4j.probe;

            import io.github.attn4j.AttentionMask;
            import io.github.attn4j.MultiHeadAttention;
            import io.github.attn4j.Tensor;
            import io.github.attn4j.internal.kernel.Kernels;

            import java.io.DataInputStream;
            import java.io.FileInputStream;
            import java.io.IOException;

            public final class ModuleProbe {
                public static void main(String[] args) throws IOException {
                    try (DataInputStream in = new DataInputStream(new FileInputStream(args[0]))) {
                        int e = in.readInt(), h = in.readInt(), kvh = in.readInt(), b = in.readInt(), l = in.readInt();
                        float[][] p = new float[8][];
                        for (int i = 0; i < p.length; i++) {
                            p[i] = read(in);
                        }
                        Tensor x = Tensor.of(read(in), b, l, e);
                        MultiHeadAttention m = MultiHeadAttention.builder(e, h).kvHeads(kvh)
                                .weights(p[0], p[1], p[2], p[3]).biases(p[4], p[5], p[6], p[7]).threads(2).build();
                        float[] y = m.forward(x, AttentionMask.causal()).toArray();
                        StringBuilder out = new StringBuilder(Kernels.describe()).append('\\n');
                        Module attn4j = MultiHeadAttention.class.getModule();
                        out.append(attn4j.getName()).append(' ')
                                .append(ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()).append('\\n');
                        for (float f : y) {
                            out.append(f).append('\\n');
                        }
                        System.out.print(out);
                    }
                }

                private static float[] read(DataInputStream in) throws IOException {
                    float[] a = new float[in.readInt()];
                    for (int i = 0; i < a.length; i++) {
                        a[i] = in.readFloat();
                    }
                    return a;
                }
            }
            """;

    @TempDir
    static Path work;
    private static Path probeClasses;
    private static Path inputs;

    @BeforeAll
    static void compileProbeAndWriteInputs() throws IOException {
        Path src = work.resolve("src");
        Files.createDirectories(src.resolve("attn4j/probe"));
        Files.writeString(src.resolve("module-info.java"), MODULE_INFO);
        Files.writeString(src.resolve("attn4j/probe/ModuleProbe.java"), PROBE);
        probeClasses = work.resolve("probe");
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        PrintWriter log = new PrintWriter(diagnostics, true, StandardCharsets.UTF_8);
        int rc = javac.run(log, log, "-d", probeClasses.toString(),
                "--module-path", libraryLocation(),
                "--add-exports", "io.github.attn4j/io.github.attn4j.internal.kernel=" + PROBE_MODULE,
                src.resolve("module-info.java").toString(), src.resolve("attn4j/probe/ModuleProbe.java").toString());
        assertEquals(0, rc, "compiling the probe module:\n" + diagnostics.toString(StandardCharsets.UTF_8));

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            for (int v : new int[]{FallbackProbe.E, FallbackProbe.HEADS, FallbackProbe.KV_HEADS, FallbackProbe.BATCH,
                    FallbackProbe.LENGTH}) {
                out.writeInt(v);
            }
            for (float[] a : FallbackProbe.parameters(SEED)) {
                write(out, a);
            }
            write(out, FallbackProbe.input(SEED).toArray());
        }
        inputs = work.resolve("inputs.bin");
        Files.write(inputs, bytes.toByteArray());
    }

    private static void write(DataOutputStream out, float[] a) throws IOException {
        out.writeInt(a.length);
        for (float f : a) {
            out.writeFloat(f);
        }
    }

    @Test
    void withoutTheIncubatorModuleTheScalarKernelsRun() throws Exception {
        Child child = run(List.of());
        assertTrue(child.path().startsWith("scalar; jdk.incubator.vector is not readable"), child.path());
        assertEquals("io.github.attn4j false", child.module(), "named module, incubator module not in the boot layer");
        assertMatchesReference(child.values());
    }

    @Test
    void withTheIncubatorModuleTheVectorKernelsRun() throws Exception {
        Child child = run(List.of("--add-modules", "jdk.incubator.vector"));
        assertTrue(child.path().startsWith("Vector API, "), child.path());
        assertEquals("io.github.attn4j true", child.module());
        assertMatchesReference(child.values());
    }

    @Test
    void withoutC2TheScalarKernelsRunOnTheModulePathToo() throws Exception {
        Child child = run(List.of("--add-modules", "jdk.incubator.vector", "-XX:TieredStopAtLevel=1"));
        assertTrue(child.path().startsWith("scalar; C2 is off"), child.path());
        assertMatchesReference(child.values());
    }

    private static void assertMatchesReference(float[] actual) {
        float[][] p = FallbackProbe.parameters(SEED);
        int hd = FallbackProbe.E / FallbackProbe.HEADS;
        var parameters = new ReferenceAttention.Parameters(FallbackProbe.E, FallbackProbe.HEADS, FallbackProbe.KV_HEADS,
                hd, FallbackProbe.E, FallbackProbe.E, (float) (1 / Math.sqrt(hd)), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        Tensor x = FallbackProbe.input(SEED);
        float[] expected = ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), parameters).output().toArray();
        Tolerance.assertClose(expected, actual, 2 * FallbackProbe.E + FallbackProbe.LENGTH + hd, "module-path child JVM output");
    }

    private record Child(String path, String module, float[] values) {
    }

    /** Runs the probe module on this JVM's java binary with attn4j's classes as a module on the module path. */
    private static Child run(List<String> jvmOptions) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m"));
        command.addAll(jvmOptions);
        command.addAll(List.of("--module-path", libraryLocation() + File.pathSeparator + probeClasses,
                "--add-exports", "io.github.attn4j/io.github.attn4j.internal.kernel=" + PROBE_MODULE,
                "-m", PROBE_MODULE + "/attn4j.probe.ModuleProbe", inputs.toString()));
        Path errFile = Files.createTempFile(work, "probe", ".err");
        Process process = new ProcessBuilder(command).redirectError(errFile.toFile()).start();
        process.getOutputStream().close();
        String stdout = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        String err = Files.readString(errFile);
        assertEquals(0, process.exitValue(), "child JVM failed: " + command + "\n" + err);
        long logLines = err.lines().filter(line -> line.contains("attn4j kernels: ")).count();
        assertEquals(1, logLines, "log lines naming the kernel path in:\n" + err);
        List<String> lines = stdout.lines().toList();
        float[] values = new float[lines.size() - 2];
        for (int i = 2; i < lines.size(); i++) {
            values[i - 2] = Float.parseFloat(lines.get(i));
        }
        return new Child(lines.get(0), lines.get(1), values);
    }

    /** target/classes (or the jar) holding module-info.class and the library. */
    private static String libraryLocation() {
        try {
            Path location = Path.of(MultiHeadAttention.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            assertTrue(Files.exists(Files.isDirectory(location) ? location.resolve("module-info.class") : location),
                    "no module-info.class in " + location);
            return location.toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
