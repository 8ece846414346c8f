package io.github.attn4j.jmh;

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
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark grid behind the README's benchmark command. It runs
 * {@link MultiHeadAttentionBenchmark} over head counts x sequence lengths x masks x module thread
 * counts (E = 512, B = 1), the textbook shape (B = 10, L = 20, E = 512, 8 heads) for every mask
 * and thread count, {@link FmaPeakBenchmark} on as many JMH threads as each thread count (the
 * ceiling of that many cores), the GEMM at 512³ and the scalar reference. It then prints effective
 * GFLOP/s (from the median iteration time) as tables, writes all results as JMH JSON, and draws
 * them as an SVG chart ({@link SvgChart}): GFLOP/s against L, one line per (heads, mask), one
 * panel per thread count, the measured FMA ceiling dashed.
 *
 * <p>Arguments are {@code key=value} pairs overriding the defaults: {@code heads=1,8,16
 * lengths=128,512,2048,8192 masks=none,causal,padding threads=1,2 textbook=true warmup=3
 * iterations=3 time=1 out=jmh/results/grid.json chart=jmh/results/grid.svg} ({@code threads}
 * is the module's thread count; {@code time} is seconds per iteration; relative paths are
 * resolved against the working directory, the project root under {@code mvn -Pbench package}).
 * Three warm-up iterations, because at L = 128 the second one still ran about ten times slower
 * than steady state (the Vector API code is not yet compiled by C2).
 */
public final class Grid {
    /** Model width of every grid point. */
    static final int EMBED_DIM = 512;

    /** Line colors by head count index, dash patterns by mask index. */
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};
    private static final String[] DASHES = {"", "7 4", "2 3", "10 3 2 3"};

    private Grid() {
    }

    /** Runs the grid with {@code key=value} overrides, prints the tables, writes the JSON and the chart. */
    public static void main(String[] args) throws RunnerException, IOException {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("heads", "1,8,16");
        defaults.put("lengths", "128,512,2048,8192");
        defaults.put("masks", "none,causal,padding");
        defaults.put("threads", "1,2");
        defaults.put("textbook", "true");
        defaults.put("warmup", "3");
        defaults.put("iterations", "3");
        defaults.put("time", "1");
        defaults.put("out", "jmh/results/grid.json");
        defaults.put("chart", "jmh/results/grid.svg");
        Map<String, String> opt = KeyValueArgs.parse(args, defaults);
        String[] heads = list(opt, "heads");
        String[] lengths = list(opt, "lengths");
        String[] masks = list(opt, "masks");
        String[] threads = list(opt, "threads");
        boolean textbook = switch (opt.get("textbook")) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("textbook: expected true or false, got " + opt.get("textbook"));
        };

        List<RunResult> results = new ArrayList<>(new Runner(common(opt)
                .include(anchored(MultiHeadAttentionBenchmark.class, "forward"))
                .include(anchored(GemmBenchmark.class, "squarePacked"))
                .include(anchored(ReferenceBenchmark.class, "forward"))
                .param("numHeads", heads)
                .param("seqLen", lengths)
                .param("mask", masks)
                .param("threads", threads)
                .param("embedDim", Integer.toString(EMBED_DIM))
                .param("batch", "1")
                .param("size", "512")
                .build()).run());
        if (textbook) {
            results.addAll(new Runner(common(opt)
                    .include(anchored(MultiHeadAttentionBenchmark.class, "forward"))
                    .param("numHeads", "8")
                    .param("seqLen", "20")
                    .param("mask", masks)
                    .param("threads", threads)
                    .param("embedDim", Integer.toString(EMBED_DIM))
                    .param("batch", "10")
                    .build()).run());
        }
        for (String t : threads) {
            results.addAll(new Runner(common(opt)
                    .include(anchored(FmaPeakBenchmark.class, "fma12"))
                    .threads(Integer.parseInt(t))
                    .build()).run());
        }

        Path json = Path.of(opt.get("out"));
        Path svg = Path.of(opt.get("chart"));
        createParent(json);
        createParent(svg);
        try (PrintStream out = new PrintStream(Files.newOutputStream(json), true, StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, out).writeOut(results);
        }
        boolean drawn = results.stream().anyMatch(r -> r.getParams().getBenchmark().endsWith("MultiHeadAttentionBenchmark.forward")
                && "1".equals(r.getParams().getParam("batch")));
        if (drawn) {
            Files.writeString(svg, chart(results, heads, lengths, masks, threads), StandardCharsets.UTF_8);
        }

        System.out.println();
        System.out.println(report(results, heads, lengths, masks, threads));
        System.out.println("JMH results (JSON): " + json);
        System.out.println(drawn ? "Chart (SVG): " + svg : "Chart (SVG): not written, no MultiHeadAttentionBenchmark result");
    }

    private static ChainedOptionsBuilder common(Map<String, String> opt) {
        TimeValue time = TimeValue.seconds(Long.parseLong(opt.get("time")));
        return new OptionsBuilder()
                .warmupIterations(Integer.parseInt(opt.get("warmup")))
                .measurementIterations(Integer.parseInt(opt.get("iterations")))
                .warmupTime(time)
                .measurementTime(time)
                .forks(1)
                .threads(1);
    }

    /** An include pattern matching exactly one benchmark method. */
    private static String anchored(Class<?> benchmark, String method) {
        return "^" + benchmark.getName().replace(".", "\\.") + "\\." + method + "$";
    }

    private static String[] list(Map<String, String> opt, String key) {
        String[] values = opt.get(key).split(",");
        if (Arrays.stream(values).anyMatch(String::isBlank)) {
            throw new IllegalArgumentException(key + ": expected a comma-separated list of values, got " + opt.get(key));
        }
        return values;
    }

    private static void createParent(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
    }

    /** Median time per operation in milliseconds. */
    static double medianMillis(RunResult r) {
        return r.getPrimaryResult().getStatistics().getPercentile(50);
    }

    /** Effective GFLOP/s of a {@link MultiHeadAttentionBenchmark} result, from its median time. */
    static double attentionGflops(RunResult r) {
        int batch = Integer.parseInt(r.getParams().getParam("batch"));
        int seqLen = Integer.parseInt(r.getParams().getParam("seqLen"));
        int embedDim = Integer.parseInt(r.getParams().getParam("embedDim"));
        return Flops.attention(batch, seqLen, embedDim) / medianMillis(r) / 1e6;
    }

    /** The {@link MultiHeadAttentionBenchmark} result at one point, or null if it did not run. */
    static RunResult find(Collection<RunResult> results, String batch, String heads, String length, String mask, String threads) {
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().endsWith("MultiHeadAttentionBenchmark.forward")
                    && batch.equals(r.getParams().getParam("batch"))
                    && heads.equals(r.getParams().getParam("numHeads"))
                    && length.equals(r.getParams().getParam("seqLen"))
                    && mask.equals(r.getParams().getParam("mask"))
                    && threads.equals(r.getParams().getParam("threads"))) {
                return r;
            }
        }
        return null;
    }

    /** The FMA ceiling in GFLOP/s measured on {@code threads} JMH threads, or NaN if it did not run. */
    static double fmaCeiling(Collection<RunResult> results, int threads) {
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().endsWith("FmaPeakBenchmark.fma12") && r.getParams().getThreads() == threads) {
                return FmaPeakBenchmark.gflops(r.getPrimaryResult().getStatistics().getPercentile(50));
            }
        }
        return Double.NaN;
    }

    /** The chart: one panel per module thread count, one line per (heads, mask) over the lengths that ran. */
    static String chart(Collection<RunResult> results, String[] heads, String[] lengths, String[] masks, String[] threads) {
        int[] sortedLengths = Arrays.stream(lengths).mapToInt(Integer::parseInt).sorted().distinct().toArray();
        List<SvgChart.Panel> panels = new ArrayList<>();
        for (String t : threads) {
            List<SvgChart.Series> series = new ArrayList<>();
            for (int h = 0; h < heads.length; h++) {
                for (int m = 0; m < masks.length; m++) {
                    List<double[]> points = new ArrayList<>();
                    for (int l : sortedLengths) {
                        RunResult r = find(results, "1", heads[h], Integer.toString(l), masks[m], t);
                        if (r != null && Double.isFinite(attentionGflops(r))) {
                            points.add(new double[]{l, attentionGflops(r)});
                        }
                    }
                    if (!points.isEmpty()) {
                        series.add(new SvgChart.Series("heads=" + heads[h] + ", " + masks[m],
                                COLORS[h % COLORS.length], DASHES[m % DASHES.length],
                                points.stream().mapToDouble(p -> p[0]).toArray(),
                                points.stream().mapToDouble(p -> p[1]).toArray()));
                    }
                }
            }
            double ceiling = fmaCeiling(results, Integer.parseInt(t));
            panels.add(new SvgChart.Panel("threads = " + t, series, ceiling,
                    String.format(Locale.ROOT, "FMA ceiling, %s thread%s: %.1f GFLOP/s", t, "1".equals(t) ? "" : "s", ceiling)));
        }
        return SvgChart.render(String.format(Locale.ROOT, "MultiHeadAttention.forward, E=%d, B=1 (JDK %s, %d float lanes)",
                        EMBED_DIM, Runtime.version().feature(), jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.length()),
                "sequence length L (log2 scale)", "effective GFLOP/s", panels);
    }

    static String report(Collection<RunResult> results, String[] heads, String[] lengths, String[] masks, String[] threads) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s, %d float lanes. Effective GFLOP/s = (8·B·L·E² + 4·B·L²·E) / median time%n",
                Runtime.version(), jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.length()));
        for (String t : threads) {
            for (String mask : masks) {
                sb.append(String.format(Locale.ROOT, "%nMultiHeadAttention.forward, E=%d, B=1, mask=%s, threads=%s: GFLOP/s (median ms)%n",
                        EMBED_DIM, mask, t));
                sb.append(String.format(Locale.ROOT, "%-8s", "heads"));
                for (String l : lengths) {
                    sb.append(String.format(Locale.ROOT, "%20s", "L=" + l));
                }
                sb.append('\n');
                for (String h : heads) {
                    sb.append(String.format(Locale.ROOT, "%-8s", h));
                    for (String l : lengths) {
                        sb.append(String.format(Locale.ROOT, "%20s", cell(find(results, "1", h, l, mask, t))));
                    }
                    sb.append('\n');
                }
            }
        }
        boolean textbookHeader = false;
        for (String t : threads) {
            for (String mask : masks) {
                RunResult r = find(results, "10", "8", "20", mask, t);
                if (r != null) {
                    if (!textbookHeader) {
                        sb.append(String.format(Locale.ROOT, "%nTextbook shape, B=10, L=20, E=%d, heads=8: GFLOP/s (median ms)%n", EMBED_DIM));
                        textbookHeader = true;
                    }
                    sb.append(String.format(Locale.ROOT, "mask=%-8s threads=%-3s %20s%n", mask, t, cell(r)));
                }
            }
        }
        sb.append('\n');
        double singleThreadPeak = fmaCeiling(results, 1);
        for (String t : threads) {
            double peak = fmaCeiling(results, Integer.parseInt(t));
            if (Double.isFinite(peak)) {
                sb.append(String.format(Locale.ROOT, "Vector API FMA ceiling (12 chains), %s JMH thread(s): %.1f GFLOP/s%n", t, peak));
            }
        }
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            if (name.contains("GemmBenchmark")) {
                int n = Integer.parseInt(r.getParams().getParam("size"));
                double gflops = Flops.gemm(n, n, n) / medianMillis(r) / 1e6;
                sb.append(String.format(Locale.ROOT, "GEMM %d³ (%s, one thread): %.1f GFLOP/s = %.0f%% of the one-thread FMA ceiling (median %.3f ms)%n",
                        n, name.substring(name.lastIndexOf('.') + 1), gflops, 100 * gflops / singleThreadPeak, medianMillis(r)));
            } else if (name.contains("ReferenceBenchmark")) {
                int l = Integer.parseInt(r.getParams().getParam("refLength"));
                int e = Integer.parseInt(r.getParams().getParam("refEmbedDim"));
                sb.append(String.format(Locale.ROOT, "Scalar reference, H=%s, L=%d, E=%d: %.2f GFLOP/s (median %.1f ms)%n",
                        r.getParams().getParam("refHeads"), l, e, Flops.attention(1, l, e) / medianMillis(r) / 1e6, medianMillis(r)));
            }
        }
        return sb.toString();
    }

    private static String cell(RunResult r) {
        if (r == null) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.1f (%.2fms)", attentionGflops(r), medianMillis(r));
    }
}
