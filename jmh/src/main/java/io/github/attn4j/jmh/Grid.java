package io.github.attn4j.jmh;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark grid behind the README's benchmark command: runs {@link MultiHeadAttentionBenchmark}
 * over head counts x sequence lengths x masks, the GEMM at 512³ and the scalar reference, then
 * prints effective GFLOP/s (from the median iteration time) as tables and writes JMH's JSON.
 *
 * <p>Arguments are {@code key=value} pairs overriding the defaults: {@code heads=1,8,16
 * lengths=128,512,2048 masks=none,causal threads=1 warmup=2 iterations=3 time=1
 * out=target/jmh-grid.json} ({@code threads} is the module's thread count).
 */
public final class Grid {
    private Grid() {
    }

    public static void main(String[] args) throws RunnerException {
        Map<String, String> opt = new LinkedHashMap<>(Map.of(
                "heads", "1,8,16", "lengths", "128,512,2048", "masks", "none,causal",
                "threads", "1", "warmup", "2", "iterations", "3", "time", "1", "out", "target/jmh-grid.json"));
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0 || !opt.containsKey(arg.substring(0, eq))) {
                throw new IllegalArgumentException("argument: expected key=value with key in " + opt.keySet() + ", got " + arg);
            }
            opt.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        String[] heads = opt.get("heads").split(",");
        String[] lengths = opt.get("lengths").split(",");
        String[] masks = opt.get("masks").split(",");

        ChainedOptionsBuilder builder = new OptionsBuilder()
                .include(MultiHeadAttentionBenchmark.class.getSimpleName() + ".forward")
                .include(GemmBenchmark.class.getSimpleName() + ".squarePacked")
                .include(FmaPeakBenchmark.class.getSimpleName())
                .include(ReferenceBenchmark.class.getSimpleName())
                .param("numHeads", heads)
                .param("seqLen", lengths)
                .param("mask", masks)
                .param("threads", opt.get("threads"))
                .param("size", "512")
                .warmupIterations(Integer.parseInt(opt.get("warmup")))
                .measurementIterations(Integer.parseInt(opt.get("iterations")))
                .warmupTime(TimeValue.seconds(Long.parseLong(opt.get("time"))))
                .measurementTime(TimeValue.seconds(Long.parseLong(opt.get("time"))))
                .forks(1)
                .threads(1)
                .resultFormat(ResultFormatType.JSON)
                .result(opt.get("out"));
        Collection<RunResult> results = new Runner(builder.build()).run();
        System.out.println();
        System.out.println(report(results, heads, lengths, masks, opt.get("threads")));
        System.out.println("JMH results (JSON): " + opt.get("out"));
    }

    /** Median time per operation in milliseconds. */
    static double medianMillis(RunResult r) {
        return r.getPrimaryResult().getStatistics().getPercentile(50);
    }

    static String report(Collection<RunResult> results, String[] heads, String[] lengths, String[] masks, String threads) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%s, %d float lanes. Effective GFLOP/s = (8·B·L·E² + 4·B·L²·E) / median time%n",
                Runtime.version(), jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.length()));
        for (String mask : masks) {
            sb.append(String.format(Locale.ROOT, "%nMultiHeadAttention.forward, E=512, B=1, mask=%s, threads=%s: GFLOP/s (median ms)%n",
                    mask, threads));
            sb.append(String.format(Locale.ROOT, "%-8s", "heads"));
            for (String l : lengths) {
                sb.append(String.format(Locale.ROOT, "%18s", "L=" + l));
            }
            sb.append('\n');
            for (String h : heads) {
                sb.append(String.format(Locale.ROOT, "%-8s", h));
                for (String l : lengths) {
                    sb.append(String.format(Locale.ROOT, "%18s", cell(results, h, l, mask)));
                }
                sb.append('\n');
            }
        }
        double peak = Double.NaN;
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().contains("FmaPeakBenchmark")) {
                peak = FmaPeakBenchmark.gflops(r.getPrimaryResult().getStatistics().getPercentile(50));
                sb.append(String.format(Locale.ROOT, "%nVector API FMA ceiling (12 chains): %.1f GFLOP/s%n", peak));
            }
        }
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            if (name.contains("GemmBenchmark")) {
                int n = Integer.parseInt(r.getParams().getParam("size"));
                double gflops = Flops.gemm(n, n, n) / medianMillis(r) / 1e6;
                sb.append(String.format(Locale.ROOT, "GEMM %d³ (%s): %.1f GFLOP/s = %.0f%% of the FMA ceiling (median %.3f ms)%n",
                        n, name.substring(name.lastIndexOf('.') + 1), gflops, 100 * gflops / peak, medianMillis(r)));
            } else if (name.contains("ReferenceBenchmark")) {
                int l = Integer.parseInt(r.getParams().getParam("refLength"));
                int e = Integer.parseInt(r.getParams().getParam("refEmbedDim"));
                sb.append(String.format(Locale.ROOT, "Scalar reference, H=%s, L=%d, E=%d: %.2f GFLOP/s (median %.1f ms)%n",
                        r.getParams().getParam("refHeads"), l, e, Flops.attention(1, l, e) / medianMillis(r) / 1e6, medianMillis(r)));
            }
        }
        return sb.toString();
    }

    private static String cell(Collection<RunResult> results, String heads, String length, String mask) {
        List<RunResult> matches = new ArrayList<>();
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().endsWith("MultiHeadAttentionBenchmark.forward")
                    && heads.equals(r.getParams().getParam("numHeads"))
                    && length.equals(r.getParams().getParam("seqLen"))
                    && mask.equals(r.getParams().getParam("mask"))) {
                matches.add(r);
            }
        }
        if (matches.isEmpty()) {
            return "-";
        }
        RunResult r = matches.get(0);
        int l = Integer.parseInt(length);
        int e = Integer.parseInt(r.getParams().getParam("embedDim"));
        double ms = medianMillis(r);
        return String.format(Locale.ROOT, "%.1f (%.2fms)", Flops.attention(1, l, e) / ms / 1e6, ms);
    }
}
