package io.github.attn4j.jmh;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JMH results as the grid report needs them, read from JMH's JSON result format (the file of
 * {@code -rf json -rff FILE}, or the one {@link Grid} writes): per benchmark run, its method, JMH
 * thread count, parameters, median score and, when it ran with {@code -prof gc}, its median
 * allocation per operation.
 */
final class GridResults {
    /** JMH's secondary metric of {@code -prof gc}: bytes allocated per benchmark operation. */
    static final String ALLOC_NORM = "gc.alloc.rate.norm";

    private GridResults() {
    }

    /**
     * One benchmark run.
     *
     * @param benchmark  the method as {@code SimpleClassName.method}
     * @param threads    JMH threads
     * @param params     the {@code @Param} values by name
     * @param median     the median of the measured iterations, in {@code unit}
     * @param unit       the score unit, e.g. {@code ms/op} or {@code ops/ns}
     * @param allocBytes bytes allocated per operation ({@value #ALLOC_NORM}), median of the iterations
     *                   (the mean when the file has no percentiles), NaN without {@code -prof gc}
     * @param jdk        the JDK version the run's fork reported
     * @param settings   forks and iterations, e.g. {@code 1 fork, 3 warm-up and 5 measured iterations of 1 s}
     * @param flags      the fork's {@code -XX:} options, space-separated ({@code ""} for none), e.g.
     *                   {@code -XX:ObjectAlignmentInBytes=64} from the grid's {@code jvmArgs}
     */
    record Result(String benchmark, int threads, Map<String, String> params, double median, String unit, double allocBytes,
                  String jdk, String settings, String flags) {
        /** The parameter {@code name} as an int. */
        int intParam(String name) {
            String v = params.get(name);
            if (v == null) {
                throw new IllegalArgumentException("params: expected " + name + " in the results of " + benchmark + ", got " + params);
            }
            return Integer.parseInt(v);
        }

        /** Median time per operation in milliseconds; for results in {@code ms/op}. */
        double millis() {
            if (!"ms/op".equals(unit)) {
                throw new IllegalStateException(benchmark + ": expected a score in ms/op, got " + unit);
            }
            return median;
        }
    }

    /**
     * The runs in a JMH JSON result document, in file order.
     *
     * @throws IllegalArgumentException if the text is not JSON or not an array of JMH results
     */
    static List<Result> parse(String json) {
        if (!(JsonReader.parse(json) instanceof List<?> runs)) {
            throw new IllegalArgumentException("json: expected an array of JMH results, got another value");
        }
        List<Result> results = new ArrayList<>();
        for (Object run : runs) {
            Map<?, ?> r = map(run, "a JMH result");
            String name = string(r.get("benchmark"), "benchmark");
            int dot = name.lastIndexOf('.', name.lastIndexOf('.') - 1);
            Map<String, String> params = new LinkedHashMap<>();
            if (r.get("params") != null) {
                map(r.get("params"), "params").forEach((k, v) -> params.put(string(k, "a parameter name"), string(v, "parameter " + k)));
            }
            Map<?, ?> primary = map(r.get("primaryMetric"), "primaryMetric");
            Map<?, ?> percentiles = map(primary.get("scorePercentiles"), "scorePercentiles");
            double alloc = Double.NaN;
            if (r.get("secondaryMetrics") instanceof Map<?, ?> secondary && secondary.get(ALLOC_NORM) != null) {
                // The median iteration: one iteration that still runs code being compiled can allocate 2 to 5 times more.
                Map<?, ?> norm = map(secondary.get(ALLOC_NORM), ALLOC_NORM);
                alloc = norm.get("scorePercentiles") instanceof Map<?, ?> p
                        ? number(p.get("50.0"), ALLOC_NORM + " median") : number(norm.get("score"), ALLOC_NORM);
            }
            results.add(new Result(name.substring(dot + 1), (int) number(r.get("threads"), "threads"), Map.copyOf(params),
                    number(percentiles.get("50.0"), "the median (scorePercentiles 50.0)"),
                    string(primary.get("scoreUnit"), "scoreUnit"), alloc, String.valueOf(r.get("jdkVersion")), settings(r), flags(r)));
        }
        return results;
    }

    private static String settings(Map<?, ?> r) {
        long forks = Math.round(number(r.get("forks"), "forks"));
        long warmup = Math.round(number(r.get("warmupIterations"), "warmupIterations"));
        long measured = Math.round(number(r.get("measurementIterations"), "measurementIterations"));
        String warmupTime = string(r.get("warmupTime"), "warmupTime");
        String time = string(r.get("measurementTime"), "measurementTime");
        return forks + (forks == 1 ? " fork, " : " forks, ") + warmup + " warm-up"
                + (warmupTime.equals(time) ? "" : " iterations of " + warmupTime) + " and " + measured
                + " measured iteration" + (measured == 1 ? "" : "s") + " of " + time;
    }

    /** The {@code -XX:} options among the run's {@code jvmArgs}, space-separated. */
    private static String flags(Map<?, ?> r) {
        List<String> flags = new ArrayList<>();
        if (r.get("jvmArgs") instanceof List<?> args) {
            for (Object a : args) {
                if (a instanceof String s && s.startsWith("-XX:")) {
                    flags.add(s);
                }
            }
        }
        return String.join(" ", flags);
    }

    private static Map<?, ?> map(Object o, String what) {
        if (o instanceof Map<?, ?> m) {
            return m;
        }
        throw new IllegalArgumentException("json: expected an object for " + what + ", got " + o);
    }

    private static String string(Object o, String what) {
        if (o instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("json: expected a string for " + what + ", got " + o);
    }

    /** A number, or one of the strings JMH writes for non-finite scores. */
    private static double number(Object o, String what) {
        if (o instanceof Double d) {
            return d;
        }
        if (o instanceof String s && (s.equals("NaN") || s.endsWith("Infinity"))) {
            return Double.parseDouble(s);
        }
        throw new IllegalArgumentException("json: expected a number for " + what + ", got " + o);
    }
}
