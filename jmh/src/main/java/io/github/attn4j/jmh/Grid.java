package io.github.attn4j.jmh;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The benchmark grid behind the README's tables and chart, in one command. With {@code -prof gc}
 * on every run, it measures:
 * <ul>
 *   <li>self-attention at E = 512, H = 8, B = 1 over {@code lengths} x {@code masks} x
 *       {@code threads}: {@link MultiHeadAttentionBenchmark} {@code forward} and
 *       {@code forwardInto}, and the ONNX Runtime peer {@link OnnxRuntimeAttentionBenchmark} on
 *       the same point right after them (module threads = ONNX Runtime intra-op threads);</li>
 *   <li>the same for the encoder shapes {@code encoders} (B x L x E x H) over
 *       {@code encoderMasks} x {@code threads};</li>
 *   <li>the attention core {@link ScaledDotProductAttentionBenchmark}, unmasked, one thread, at
 *       head widths {@code headWidths} (H = 512 / hd) over {@code lengths}, each point followed
 *       by ONNX Runtime's attention op alone ({@link OnnxRuntimeAttentionCoreBenchmark});</li>
 *   <li>the FMA ceiling {@link FmaPeakBenchmark} on as many JMH threads as each thread count.</li>
 * </ul>
 * It writes every result as JMH JSON ({@code out}, the format of {@code -rf json}), then
 * {@link GridReport} turns that file into the markdown tables ({@code table}), the chart
 * ({@code chart}), the generated part of the benchmark README ({@code readme}) and the peer table of
 * the project README ({@code summary}; empty for none).
 *
 * <p>Arguments are {@code key=value} pairs overriding the defaults {@code lengths=128,512,2048,8192
 * masks=none,causal,padding threads=1,2 encoders=32x128x384x12,4x512x768x12
 * encoderMasks=none,padding headWidths=64,32 peer=true warmup=5 iterations=5 time=1
 * out=jmh/results/grid.json table=jmh/results/grid.md chart=jmh/results/grid.svg
 * readme=jmh/README.md summary=README.md jvmArgs=}; an empty list ({@code encoders=}) skips that part, {@code peer=false}
 * skips ONNX Runtime, {@code time} is seconds per iteration, {@code jvmArgs} is a comma-separated
 * list of options put before every fork's own (for example {@code -XX:ObjectAlignmentInBytes=64};
 * the reports name the {@code -XX:} ones), and relative paths resolve against
 * the working directory (the project root under {@code mvn -Pbench package}). Every point runs in
 * its own fork; a point slower than {@code time} runs one call per iteration.
 */
public final class Grid {
    /** Model width of the self-attention grid and total width of the attention-core heads. */
    static final int EMBED_DIM = 512;
    /** Query heads of the self-attention grid. */
    static final int HEADS = 8;

    private Grid() {
    }

    /** Runs the grid with {@code key=value} overrides, writes the JSON, the tables and the chart. */
    public static void main(String[] args) throws RunnerException, IOException {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("lengths", "128,512,2048,8192");
        defaults.put("masks", "none,causal,padding");
        defaults.put("threads", "1,2");
        defaults.put("encoders", "32x128x384x12,4x512x768x12");
        defaults.put("encoderMasks", "none,padding");
        defaults.put("headWidths", "64,32");
        defaults.put("peer", "true");
        defaults.put("warmup", "5");
        defaults.put("iterations", "5");
        defaults.put("time", "1");
        defaults.put("out", "jmh/results/grid.json");
        defaults.put("table", "jmh/results/grid.md");
        defaults.put("chart", "jmh/results/grid.svg");
        defaults.put("readme", "jmh/README.md");
        defaults.put("summary", "README.md");
        defaults.put("jvmArgs", "");
        Map<String, String> opt = KeyValueArgs.parse(args, defaults);
        boolean peer = switch (opt.get("peer")) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("peer: expected true or false, got " + opt.get("peer"));
        };

        List<RunResult> results = new ArrayList<>();
        for (String t : list(opt, "threads")) {
            results.addAll(new Runner(common(opt).include(anchored(FmaPeakBenchmark.class, "fma12"))
                    .threads(Integer.parseInt(t)).build()).run());
        }
        for (String t : list(opt, "threads")) {
            for (String mask : list(opt, "masks")) {
                for (String l : list(opt, "lengths")) {
                    results.addAll(selfAttention(opt, peer, new int[]{1, Integer.parseInt(l), EMBED_DIM, HEADS}, mask, t));
                }
            }
        }
        for (String shape : list(opt, "encoders")) {
            int[] blEh = shape(shape);
            for (String t : list(opt, "threads")) {
                for (String mask : list(opt, "encoderMasks")) {
                    results.addAll(selfAttention(opt, peer, blEh, mask, t));
                }
            }
        }
        for (String hd : list(opt, "headWidths")) {
            int width = Integer.parseInt(hd);
            if (width <= 0 || EMBED_DIM % width != 0) {
                throw new IllegalArgumentException("headWidths: expected divisors of " + EMBED_DIM + ", got " + hd);
            }
            for (String l : list(opt, "lengths")) {
                ChainedOptionsBuilder b = common(opt)
                        .include(anchored(ScaledDotProductAttentionBenchmark.class, "attention"))
                        .param("heads", Integer.toString(EMBED_DIM / width))
                        .param("headDim", hd)
                        .param("seqLen", l)
                        .param("mask", "none")
                        .param("threads", "1");
                if (peer) {
                    b.include(anchored(OnnxRuntimeAttentionCoreBenchmark.class, "run"));
                }
                results.addAll(new Runner(b.build()).run());
            }
        }

        Path json = Path.of(opt.get("out"));
        Path parent = json.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (PrintStream out = new PrintStream(Files.newOutputStream(json), true, StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, out).writeOut(results);
        }
        System.out.println("JMH results (JSON): " + json);
        GridReport.write(json, Path.of(opt.get("table")), Path.of(opt.get("chart")), GridReport.path(opt.get("readme")),
                GridReport.path(opt.get("summary")), FmaPeakBenchmark.gflops(1));
    }

    /** One self-attention point {@code (B, L, E, H)}: attn4j's forward and forwardInto, then ONNX Runtime's run. */
    private static Collection<RunResult> selfAttention(Map<String, String> opt, boolean peer, int[] blEh, String mask,
                                                      String threads) throws RunnerException {
        ChainedOptionsBuilder b = common(opt)
                .include(anchored(MultiHeadAttentionBenchmark.class, "forward"))
                .include(anchored(MultiHeadAttentionBenchmark.class, "forwardInto"))
                .param("batch", Integer.toString(blEh[0]))
                .param("seqLen", Integer.toString(blEh[1]))
                .param("embedDim", Integer.toString(blEh[2]))
                .param("numHeads", Integer.toString(blEh[3]))
                .param("mask", mask)
                .param("threads", threads);
        if (peer) {
            b.include(anchored(OnnxRuntimeAttentionBenchmark.class, "run"));
        }
        return new Runner(b.build()).run();
    }

    private static ChainedOptionsBuilder common(Map<String, String> opt) {
        TimeValue time = TimeValue.seconds(Long.parseLong(opt.get("time")));
        return new OptionsBuilder()
                .jvmArgsPrepend(list(opt, "jvmArgs"))
                .warmupIterations(Integer.parseInt(opt.get("warmup")))
                .measurementIterations(Integer.parseInt(opt.get("iterations")))
                .warmupTime(time)
                .measurementTime(time)
                .forks(1)
                .threads(1)
                .addProfiler(GCProfiler.class);
    }

    /** An include pattern matching exactly one benchmark method. */
    private static String anchored(Class<?> benchmark, String method) {
        return "^" + benchmark.getName().replace(".", "\\.") + "\\." + method + "$";
    }

    /** The comma-separated values of {@code key}; none for an empty value. */
    static String[] list(Map<String, String> opt, String key) {
        String value = opt.get(key);
        if (value.isEmpty()) {
            return new String[0];
        }
        String[] values = value.split(",", -1);
        if (Arrays.stream(values).anyMatch(String::isBlank)) {
            throw new IllegalArgumentException(key + ": expected a comma-separated list of values, got " + value);
        }
        return values;
    }

    /** {@code BxLxExH}, e.g. {@code 32x128x384x12}, as {@code {B, L, E, H}}. */
    static int[] shape(String text) {
        String[] parts = text.split("x", -1);
        try {
            int[] blEh = Arrays.stream(parts).mapToInt(Integer::parseInt).toArray();
            if (blEh.length == 4 && Arrays.stream(blEh).allMatch(d -> d > 0) && blEh[2] % blEh[3] == 0) {
                return blEh;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("encoders: expected BxLxExH with positive sizes and H dividing E, got " + text);
    }
}
