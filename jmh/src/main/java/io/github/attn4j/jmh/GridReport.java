package io.github.attn4j.jmh;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * Turns the grid's JMH results (JMH's JSON result format) into the README's benchmark tables and
 * chart, so that no figure there is copied by hand. {@link Grid} calls it after its runs; on its
 * own it reads any such file:
 * {@code java --add-modules jdk.incubator.vector -cp target/benchmarks.jar io.github.attn4j.jmh.GridReport key=value ...}
 * with keys {@code json=jmh/results/grid.json table=jmh/results/grid.md chart=jmh/results/grid.svg
 * readme=jmh/README.md summary=README.md} ({@code readme=} or {@code summary=} empty leaves that
 * file alone). {@code readme} gets all the tables, {@code summary} (the project's README) the
 * peer table alone ({@link #peerTable}).
 *
 * <p>Per self-attention point ({@code MultiHeadAttentionBenchmark.forward}): attn4j's and ONNX
 * Runtime's median times ({@code OnnxRuntimeAttentionBenchmark.run}), the ratio ONNX Runtime /
 * attn4j, each side's share of the FMA ceiling measured in the same run on as many threads
 * ({@code FmaPeakBenchmark.fma12}; effective flops: {@link Flops#attention}, whatever the mask
 * skips), and the bytes allocated per call ({@code -prof gc}) by {@code forward}, by
 * {@code forwardInto} and by ONNX Runtime's Java side. Per attention-core point
 * ({@code ScaledDotProductAttentionBenchmark.attention}, beside
 * {@code OnnxRuntimeAttentionCoreBenchmark.run}): the same, with flops
 * {@link Flops#scoresAndValues}. The FMA score (vector FMAs per ns)
 * is converted with this JVM's preferred vector length, so run the report on the machine that
 * measured.
 */
public final class GridReport {
    /** The line before the generated part of the README. */
    static final String BEGIN = "<!-- grid:begin (written by io.github.attn4j.jmh.GridReport from jmh/results/grid.json; do not edit) -->";
    /** The line after the generated part of the README. */
    static final String END = "<!-- grid:end -->";
    /** The line before the peer table in the project's README. */
    static final String PEERS_BEGIN = "<!-- peers:begin (written by io.github.attn4j.jmh.GridReport from jmh/results/grid.json; do not edit) -->";
    /** The line after the peer table in the project's README. */
    static final String PEERS_END = "<!-- peers:end -->";

    static final String MHA = "MultiHeadAttentionBenchmark.forward";
    static final String MHA_INTO = "MultiHeadAttentionBenchmark.forwardInto";
    static final String ORT = "OnnxRuntimeAttentionBenchmark.run";
    static final String SDPA = "ScaledDotProductAttentionBenchmark.attention";
    static final String ORT_CORE = "OnnxRuntimeAttentionCoreBenchmark.run";
    static final String FMA = "FmaPeakBenchmark.fma12";

    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    private static final String PEER_DASH = "7 4";

    private GridReport() {
    }

    /**
     * Reads the JSON and writes the table, the chart and the README's generated part.
     *
     * @param args {@code key=value} overrides of {@code json table chart readme summary}
     * @throws IOException if a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("json", "jmh/results/grid.json");
        defaults.put("table", "jmh/results/grid.md");
        defaults.put("chart", "jmh/results/grid.svg");
        defaults.put("readme", "jmh/README.md");
        defaults.put("summary", "README.md");
        Map<String, String> opt = KeyValueArgs.parse(args, defaults);
        write(Path.of(opt.get("json")), Path.of(opt.get("table")), Path.of(opt.get("chart")), path(opt.get("readme")),
                path(opt.get("summary")), FmaPeakBenchmark.gflops(1));
    }

    /** The path named by a {@code key=value} option, null when it is empty. */
    static Path path(String option) {
        return option.isEmpty() ? null : Path.of(option);
    }

    /**
     * Writes the markdown of {@code json} to {@code table} and into {@code readme} (if not null)
     * between {@link #BEGIN} and {@link #END}, its peer table into {@code summary} (if not null)
     * between {@link #PEERS_BEGIN} and {@link #PEERS_END}, and its chart to {@code chart} (when it
     * has self-attention or attention-core results). {@code flopsPerFma} converts the FMA score.
     */
    static void write(Path json, Path table, Path chart, Path readme, Path summary, double flopsPerFma) throws IOException {
        List<GridResults.Result> results = GridResults.parse(Files.readString(json, StandardCharsets.UTF_8));
        String markdown = markdown(results, flopsPerFma);
        writeFile(table, markdown);
        String svg = chart(results, flopsPerFma);
        if (svg != null) {
            writeFile(chart, svg);
        }
        if (readme != null) {
            Files.writeString(readme, splice(Files.readString(readme, StandardCharsets.UTF_8), markdown), StandardCharsets.UTF_8);
        }
        if (summary != null) {
            Files.writeString(summary, splice(Files.readString(summary, StandardCharsets.UTF_8), PEERS_BEGIN, PEERS_END,
                    peerTable(results, flopsPerFma)), StandardCharsets.UTF_8);
        }
        System.out.println(markdown);
        System.out.println("Table: " + table + (svg != null ? ", chart: " + chart : ", no chart (nothing to draw)")
                + (readme != null ? ", README: " + readme : "") + (summary != null ? ", peer table: " + summary : ""));
    }

    private static void writeFile(Path file, String text) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /**
     * {@code readme} with the text between its {@link #BEGIN} and {@link #END} lines replaced by
     * {@code generated}.
     *
     * @throws IllegalArgumentException if the markers are missing or out of order
     */
    static String splice(String readme, String generated) {
        return splice(readme, BEGIN, END, generated);
    }

    /**
     * {@code readme} with the text between its lines {@code beginLine} and {@code endLine} replaced
     * by {@code generated}.
     *
     * @throws IllegalArgumentException if the markers are missing or out of order
     */
    static String splice(String readme, String beginLine, String endLine, String generated) {
        int begin = readme.indexOf(beginLine);
        int end = readme.indexOf(endLine);
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("readme: expected the lines " + beginLine + " and " + endLine
                    + " in that order, got " + (begin < 0 ? "no begin line" : "the end line first or missing"));
        }
        return readme.substring(0, begin + beginLine.length()) + "\n\n" + generated.strip() + "\n\n" + readme.substring(end);
    }

    /**
     * The project README's summary: per self-attention shape and mask, the ratio ONNX Runtime /
     * attn4j on each thread count of the grid and attn4j's share of the FMA ceiling on as many
     * threads, with the ceilings the shares refer to. Empty without self-attention results.
     */
    static String peerTable(List<GridResults.Result> results, double flopsPerFma) {
        List<GridResults.Result> mha = of(results, MHA);
        if (mha.isEmpty()) {
            return "";
        }
        List<Integer> threads = distinct(mha, "threads").stream().sorted().toList();
        StringBuilder sb = new StringBuilder("`MultiHeadAttention.forward(x, mask)` against ONNX Runtime in the same grid run, "
                + "ratio = ONNX Runtime time / attn4j time (above 1 means attn4j is faster); share = attn4j's effective "
                + "flops against the FMA ceiling of the same run (");
        sb.append(String.join(", ", threads.stream().map(t -> String.format(Locale.ROOT, "%.1f GFLOP/s on %d thread%s",
                ceiling(results, t, flopsPerFma), t, t == 1 ? "" : "s")).toList()));
        sb.append(String.format(Locale.ROOT, "; %.0f flops per vector FMA, JDK %s%s).%n%n| B, L, E, H | mask |",
                flopsPerFma, results.getFirst().jdk(), flags(results)));
        threads.forEach(t -> sb.append(" ratio, ").append(t).append(t == 1 ? " thread |" : " threads |"));
        threads.forEach(t -> sb.append(" share, ").append(t).append(t == 1 ? " thread |" : " threads |"));
        sb.append("\n| --- | --- |").append(" ---: |".repeat(2 * threads.size())).append('\n');
        Set<String> rows = new LinkedHashSet<>();
        for (GridResults.Result a : mha) {
            String row = String.format(Locale.ROOT, "| %d, %d, %d, %d | %s |", a.intParam("batch"), a.intParam("seqLen"),
                    a.intParam("embedDim"), a.intParam("numHeads"), a.params().get("mask"));
            if (!rows.add(row)) {
                continue;
            }
            StringBuilder ratios = new StringBuilder();
            StringBuilder shares = new StringBuilder();
            for (int t : threads) {
                GridResults.Result at = same(results, MHA, a, t);
                GridResults.Result ort = same(results, ORT, a, t);
                ratios.append(at == null || ort == null ? " – |" : String.format(Locale.ROOT, " %.2fx |", ort.millis() / at.millis()));
                shares.append(at == null ? " – |" : " " + share(attentionFlops(at), at, ceiling(results, t, flopsPerFma)) + " |");
            }
            sb.append(row).append(ratios).append(shares).append('\n');
        }
        return sb.toString();
    }

    /**
     * {@code ", JVM options X"} for the {@code -XX:} options the runs' forks had (the grid's
     * {@code jvmArgs}; each distinct set, joined by "; "), or {@code ""} when they had none.
     */
    static String flags(List<GridResults.Result> results) {
        String sets = String.join("; ", results.stream().map(GridResults.Result::flags).filter(f -> !f.isEmpty()).distinct().toList());
        return sets.isEmpty() ? "" : ", JVM options `" + sets + "`";
    }

    /** The FMA ceiling in GFLOP/s on {@code threads} JMH threads, NaN if it did not run. */
    static double ceiling(List<GridResults.Result> results, int threads, double flopsPerFma) {
        return results.stream().filter(r -> r.benchmark().equals(FMA) && r.threads() == threads)
                .mapToDouble(r -> r.median() * flopsPerFma).findFirst().orElse(Double.NaN);
    }

    /** The tables: the ceilings, the self-attention points with the peer, the attention-core points. */
    static String markdown(List<GridResults.Result> results, double flopsPerFma) {
        StringBuilder sb = new StringBuilder();
        Set<Integer> threadCounts = new LinkedHashSet<>();
        results.stream().filter(r -> r.benchmark().equals(FMA)).forEach(r -> threadCounts.add(r.threads()));
        sb.append("FMA ceiling (`FmaPeakBenchmark`, same run):");
        for (int t : threadCounts) {
            sb.append(String.format(Locale.ROOT, " %.1f GFLOP/s on %d thread%s;", ceiling(results, t, flopsPerFma), t, t == 1 ? "" : "s"));
        }
        sb.append(String.format(Locale.ROOT, " %.0f flops per vector FMA, JDK %s%s. Each point: %s.%n",
                flopsPerFma, results.isEmpty() ? "?" : results.getFirst().jdk(), flags(results),
                String.join("; ", results.stream().map(GridResults.Result::settings).distinct().toList())));

        List<GridResults.Result> mha = of(results, MHA);
        if (!mha.isEmpty()) {
            sb.append("\nSelf-attention `forward(x, mask)`, medians. Ratio = ONNX Runtime time / attn4j time; "
                    + "ceiling = effective flops (8·B·L·E² + 4·B·L²·E, whatever the mask skips) / time / FMA ceiling on as "
                    + "many threads; allocation per call from `-prof gc` (ONNX Runtime: its Java side only).\n\n");
            sb.append("| B | L | E | H | mask | threads | attn4j | ONNX Runtime | ratio | attn4j of ceiling "
                    + "| ORT of ceiling | alloc `forward` | alloc `forward(.., out)` | alloc ORT |\n");
            sb.append("| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for (GridResults.Result a : mha) {
                GridResults.Result ort = same(results, ORT, a);
                GridResults.Result into = same(results, MHA_INTO, a);
                double flops = attentionFlops(a);
                double peak = ceiling(results, a.intParam("threads"), flopsPerFma);
                sb.append(String.format(Locale.ROOT, "| %d | %d | %d | %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                        a.intParam("batch"), a.intParam("seqLen"), a.intParam("embedDim"), a.intParam("numHeads"),
                        a.params().get("mask"), a.intParam("threads"), millis(a), ort == null ? "–" : millis(ort),
                        ort == null ? "–" : String.format(Locale.ROOT, "%.2fx", ort.millis() / a.millis()),
                        share(flops, a, peak), ort == null ? "–" : share(flops, ort, peak), bytes(a.allocBytes()),
                        into == null ? "–" : bytes(into.allocBytes()), ort == null ? "–" : bytes(ort.allocBytes())));
            }
        }

        List<GridResults.Result> sdpa = of(results, SDPA);
        if (!sdpa.isEmpty()) {
            sb.append("\nAttention core on projected heads (1, H, L, hd): `ScaledDotProductAttention.apply` against ONNX "
                    + "Runtime's `MultiHeadAttention` op alone (unmasked only), medians; flops 4·L²·H·hd, whatever the mask "
                    + "skips.\n\n");
            sb.append("| H | hd | L | mask | threads | attn4j | ONNX Runtime | ratio | attn4j GFLOP/s | attn4j of ceiling "
                    + "| ORT of ceiling | alloc attn4j | alloc ORT |\n");
            sb.append("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for (GridResults.Result a : sdpa) {
                int h = a.intParam("heads"), hd = a.intParam("headDim"), l = a.intParam("seqLen");
                double flops = Flops.scoresAndValues(1, l, (long) h * hd);
                double peak = ceiling(results, a.intParam("threads"), flopsPerFma);
                GridResults.Result ort = sameCore(results, a);
                sb.append(String.format(Locale.ROOT, "| %d | %d | %d | %s | %d | %s | %s | %s | %.1f | %s | %s | %s | %s |%n",
                        h, hd, l, a.params().get("mask"), a.intParam("threads"), millis(a), ort == null ? "–" : millis(ort),
                        ort == null ? "–" : String.format(Locale.ROOT, "%.2fx", ort.millis() / a.millis()),
                        flops / a.millis() / 1e6, share(flops, a, peak), ort == null ? "–" : share(flops, ort, peak),
                        bytes(a.allocBytes()), ort == null ? "–" : bytes(ort.allocBytes())));
            }
        }
        return sb.toString();
    }

    /**
     * The chart, or null if there is nothing to draw: effective GFLOP/s against L, one panel per
     * thread count of the B = 1 self-attention points (attn4j solid, ONNX Runtime dashed, one
     * color per mask) and one per thread count of the attention core (one color per head width),
     * each with the FMA ceiling of that many threads.
     */
    static String chart(List<GridResults.Result> results, double flopsPerFma) {
        List<GridResults.Result> mha = of(results, MHA).stream().filter(r -> r.intParam("batch") == 1).toList();
        List<GridResults.Result> sdpa = of(results, SDPA);
        List<SvgChart.Panel> panels = new ArrayList<>();
        for (int t : distinct(mha, "threads")) {
            List<SvgChart.Series> series = new ArrayList<>();
            List<GridResults.Result> ofThreads = mha.stream().filter(r -> r.intParam("threads") == t).toList();
            List<String> masks = ofThreads.stream().map(r -> r.params().get("mask")).distinct().toList();
            for (int m = 0; m < masks.size(); m++) {
                String mask = masks.get(m);
                List<GridResults.Result> points = ofThreads.stream().filter(r -> r.params().get("mask").equals(mask)).toList();
                addSeries(series, "attn4j, " + mask, COLORS[m % COLORS.length], "", points, r -> r);
                addSeries(series, "ONNX Runtime, " + mask, COLORS[m % COLORS.length], PEER_DASH, points,
                        r -> same(results, ORT, r));
            }
            panels.add(panel("self-attention, threads = " + t, series, ceiling(results, t, flopsPerFma), t));
        }
        for (int t : distinct(sdpa, "threads")) {
            List<SvgChart.Series> series = new ArrayList<>();
            List<Integer> widths = distinct(sdpa, "headDim");
            for (int w = 0; w < widths.size(); w++) {
                int hd = widths.get(w);
                List<GridResults.Result> points = sdpa.stream()
                        .filter(r -> r.intParam("threads") == t && r.intParam("headDim") == hd).toList();
                addSeries(series, "attn4j, hd = " + hd, COLORS[(w + 3) % COLORS.length], "", points, r -> r);
                addSeries(series, "ONNX Runtime, hd = " + hd, COLORS[(w + 3) % COLORS.length], PEER_DASH, points,
                        r -> sameCore(results, r));
            }
            panels.add(panel("attention core, threads = " + t, series, ceiling(results, t, flopsPerFma), t));
        }
        panels.removeIf(p -> p.series().isEmpty());
        if (panels.isEmpty()) {
            return null;
        }
        String shape = mha.isEmpty() ? "" : String.format(Locale.ROOT, "E=%d, H=%d, B=1; ",
                mha.getFirst().intParam("embedDim"), mha.getFirst().intParam("numHeads"));
        return SvgChart.render("attn4j and ONNX Runtime, " + shape + "JDK " + results.getFirst().jdk(),
                "sequence length L (log2 scale)", "effective GFLOP/s", panels);
    }

    private static SvgChart.Panel panel(String title, List<SvgChart.Series> series, double ceiling, int threads) {
        return new SvgChart.Panel(title, series, ceiling,
                String.format(Locale.ROOT, "FMA ceiling, %d thread%s: %.1f GFLOP/s", threads, threads == 1 ? "" : "s", ceiling));
    }

    /** A series of GFLOP/s against L over {@code points} (sorted by L), each mapped to the result to plot; none if none ran. */
    private static void addSeries(List<SvgChart.Series> series, String label, String color, String dash,
                                  List<GridResults.Result> points, UnaryOperator<GridResults.Result> pick) {
        List<double[]> xy = new ArrayList<>();
        points.stream().sorted((a, b) -> Integer.compare(a.intParam("seqLen"), b.intParam("seqLen"))).forEach(p -> {
            GridResults.Result r = pick.apply(p);
            if (r != null) {
                xy.add(new double[]{p.intParam("seqLen"), gflops(r)});
            }
        });
        if (!xy.isEmpty()) {
            series.add(new SvgChart.Series(label, color, dash, xy.stream().mapToDouble(p -> p[0]).toArray(),
                    xy.stream().mapToDouble(p -> p[1]).toArray()));
        }
    }

    /** Effective GFLOP/s of a self-attention or attention-core result. */
    static double gflops(GridResults.Result r) {
        double flops = r.params().containsKey("headDim")
                ? Flops.scoresAndValues(1, r.intParam("seqLen"), (long) r.intParam("heads") * r.intParam("headDim"))
                : attentionFlops(r);
        return flops / r.millis() / 1e6;
    }

    private static List<GridResults.Result> of(List<GridResults.Result> results, String benchmark) {
        return results.stream().filter(r -> r.benchmark().equals(benchmark)).toList();
    }

    private static List<Integer> distinct(List<GridResults.Result> results, String param) {
        return results.stream().map(r -> r.intParam(param)).distinct().toList();
    }

    /** The result of {@code benchmark} at the point of {@code a} (same shape, mask and threads), or null. */
    static GridResults.Result same(List<GridResults.Result> results, String benchmark, GridResults.Result a) {
        return same(results, benchmark, a, a.intParam("threads"));
    }

    /** The result of {@code benchmark} with the shape and mask of {@code a} on {@code threads} threads, or null. */
    static GridResults.Result same(List<GridResults.Result> results, String benchmark, GridResults.Result a, int threads) {
        Predicate<GridResults.Result> samePoint = r -> r.benchmark().equals(benchmark) && r.intParam("threads") == threads
                && List.of("batch", "seqLen", "embedDim", "numHeads", "mask").stream()
                .allMatch(p -> a.params().get(p).equals(r.params().get(p)));
        return results.stream().filter(samePoint).findFirst().orElse(null);
    }

    /** Effective flops of a self-attention result: {@link Flops#attention} of its shape. */
    private static double attentionFlops(GridResults.Result r) {
        return Flops.attention(r.intParam("batch"), r.intParam("seqLen"), r.intParam("embedDim"));
    }

    /** ONNX Runtime's attention core at the point of the unmasked attn4j result {@code a}, or null. */
    static GridResults.Result sameCore(List<GridResults.Result> results, GridResults.Result a) {
        if (!"none".equals(a.params().get("mask"))) {
            return null;
        }
        return results.stream().filter(r -> r.benchmark().equals(ORT_CORE)
                && List.of("heads", "headDim", "seqLen", "threads").stream().allMatch(p -> a.params().get(p).equals(r.params().get(p))))
                .findFirst().orElse(null);
    }

    private static String millis(GridResults.Result r) {
        double ms = r.millis();
        return String.format(Locale.ROOT, ms >= 100 ? "%.1f ms" : ms >= 1 ? "%.2f ms" : "%.3f ms", ms);
    }

    private static String share(double flops, GridResults.Result r, double ceiling) {
        return Double.isFinite(ceiling) ? String.format(Locale.ROOT, "%.0f%%", 100 * flops / r.millis() / 1e6 / ceiling) : "–";
    }

    /** Bytes as B, KiB or MiB; a dash without {@code -prof gc}. */
    static String bytes(double b) {
        if (!Double.isFinite(b)) {
            return "–";
        }
        if (b < 1024) {
            return String.format(Locale.ROOT, "%.0f B", b);
        }
        return b < 1024 * 1024 ? String.format(Locale.ROOT, "%.1f KiB", b / 1024) : String.format(Locale.ROOT, "%.2f MiB", b / (1024 * 1024));
    }
}
