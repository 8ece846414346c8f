package io.github.attn4j.jmh;

import ai.onnxruntime.OrtException;
import io.github.attn4j.jmh.peer.OnnxAttentionSession;
import io.github.attn4j.jmh.peer.OnnxModel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where ONNX Runtime spends its time in {@link OnnxRuntimeAttentionBenchmark}'s model: runs the
 * same session (same weights, input and mask) with ONNX Runtime's profiler on and prints, per
 * graph node, the median kernel time, its share of the median {@code model_run}, and GFLOP/s
 * (2·B·L·E² per projection MatMul, 4·B·L²·E for the attention node whatever the mask, as the
 * benchmarks count). Set these against attn4j's parts measured on their own:
 * {@code GemmBenchmark.projectionPacked} (the fused Q/K/V projection, the three MatMuls here)
 * and {@code ScaledDotProductAttentionBenchmark} (the attention node).
 *
 * <p>Arguments are {@code key=value} pairs: {@code heads=8 lengths=128,512,2048 mask=none
 * threads=1 runs=100}. The first quarter of the runs is dropped as warm-up. The profiler's JSON
 * files go to the temporary directory and are deleted after reading. Run it as
 * {@code java --enable-native-access=ALL-UNNAMED -cp target/benchmarks.jar io.github.attn4j.jmh.OnnxNodeProfile}.
 */
public final class OnnxNodeProfile {
    /** Model width, as in the grid. */
    private static final int EMBED_DIM = 512;

    private static final Pattern DURATION = Pattern.compile("\"dur\"\\s*:\\s*(\\d+)");
    private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern OP = Pattern.compile("\"op_name\"\\s*:\\s*\"([^\"]*)\"");
    private static final String KERNEL_SUFFIX = "_kernel_time";

    private OnnxNodeProfile() {
    }

    /** One graph node's operator and its kernel times in microseconds, one per run. */
    record Node(String op, List<Long> micros) {
    }

    /** A parsed profile: {@code model_run} times and node times, in microseconds, nodes in first-seen order. */
    record Profile(List<Long> runs, Map<String, Node> nodes) {
    }

    public static void main(String[] args) throws OrtException, IOException {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("heads", "8");
        defaults.put("lengths", "128,512,2048");
        defaults.put("mask", "none");
        defaults.put("threads", "1");
        defaults.put("runs", "100");
        Map<String, String> opt = KeyValueArgs.parse(args, defaults);
        int heads = Integer.parseInt(opt.get("heads"));
        int threads = Integer.parseInt(opt.get("threads"));
        int runs = Integer.parseInt(opt.get("runs"));
        if (runs < 4) {
            throw new IllegalArgumentException("runs: expected at least 4 (a quarter is dropped as warm-up), got " + runs);
        }
        OnnxModel.Mask mask = OnnxModel.Mask.of(opt.get("mask"));
        for (String l : opt.get("lengths").split(",")) {
            int length = Integer.parseInt(l.trim());
            Profile profile = profile(heads, length, mask, threads, runs);
            System.out.print(table(profile, heads, length, opt.get("mask"), threads, runs / 4));
        }
    }

    /** Runs the session {@code runs} times with the profiler on and parses what it wrote. */
    static Profile profile(int heads, int length, OnnxModel.Mask mask, int threads, int runs)
            throws OrtException, IOException {
        float[][] w = OnnxRuntimeAttentionBenchmark.seededWeights(EMBED_DIM, heads, OnnxRuntimeAttentionBenchmark.WEIGHT_SEED);
        byte[] model = OnnxModel.multiHeadAttention(EMBED_DIM, heads, mask, w[0], null, w[1], null);
        float[] x = Inputs.uniform(new SplittableRandom(7), 1, length, EMBED_DIM).toArray();
        String prefix = Path.of(System.getProperty("java.io.tmpdir"), "attn4j-ort-profile").toString();
        Path file;
        try (OnnxAttentionSession session = new OnnxAttentionSession(model, mask, threads, x, 1, length, EMBED_DIM,
                mask == OnnxModel.Mask.PADDING ? Inputs.paddedKeys(1, length) : null, prefix)) {
            for (int r = 0; r < runs; r++) {
                session.run();
            }
            file = Path.of(session.endProfiling());
        }
        try {
            return parse(Files.readAllLines(file));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Parses ONNX Runtime's profile, one event per line: {@code model_run} session events and
     * {@code <node>_kernel_time} node events with their {@code op_name}.
     */
    static Profile parse(List<String> lines) {
        List<Long> runs = new ArrayList<>();
        Map<String, Node> nodes = new LinkedHashMap<>();
        for (String line : lines) {
            Matcher name = NAME.matcher(line);
            Matcher duration = DURATION.matcher(line);
            if (!name.find() || !duration.find()) {
                continue;
            }
            long micros = Long.parseLong(duration.group(1));
            String event = name.group(1);
            if (event.equals("model_run")) {
                runs.add(micros);
            } else if (event.endsWith(KERNEL_SUFFIX)) {
                Matcher op = OP.matcher(line);
                String node = event.substring(0, event.length() - KERNEL_SUFFIX.length());
                nodes.computeIfAbsent(node, n -> new Node(op.find() ? op.group(1) : "?", new ArrayList<>())).micros().add(micros);
            }
        }
        return new Profile(runs, nodes);
    }

    /** Median of {@code values} after dropping the first {@code skip}. */
    static double median(List<Long> values, int skip) {
        long[] v = values.subList(Math.min(skip, values.size()), values.size()).stream().mapToLong(Long::longValue).toArray();
        if (v.length == 0) {
            throw new IllegalArgumentException("values: expected more than " + skip + ", got " + values.size());
        }
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
    }

    /** The printed table for one length. */
    static String table(Profile p, int heads, int length, String mask, int threads, int skip) {
        double total = median(p.runs(), skip);
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "L=%d H=%d E=%d mask=%s threads=%d: model_run median %.3f ms over %d runs (%d warm-up runs dropped)%n",
                length, heads, EMBED_DIM, mask, threads, total / 1000, p.runs().size() - skip, skip));
        out.append(String.format(Locale.ROOT, "  %-16s %-20s %10s %7s %8s%n", "node", "op", "median ms", "share", "GFLOP/s"));
        for (Map.Entry<String, Node> e : p.nodes().entrySet()) {
            double micros = median(e.getValue().micros(), skip);
            double flops = switch (e.getValue().op()) {
                case "MatMul" -> Flops.gemm(length, EMBED_DIM, EMBED_DIM);
                case "MultiHeadAttention", "GroupQueryAttention" -> Flops.scoresAndValues(1, length, EMBED_DIM);
                default -> Double.NaN;
            };
            out.append(String.format(Locale.ROOT, "  %-16s %-20s %10.3f %6.1f%% %8s%n", e.getKey(), e.getValue().op(),
                    micros / 1000, 100 * micros / total,
                    Double.isNaN(flops) ? "-" : String.format(Locale.ROOT, "%.1f", flops / micros / 1e3)));
        }
        return out.toString();
    }
}
