package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.KvCache;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Precision;
import io.github.attn4j.ScaledDotProductAttention;
import io.github.attn4j.RotaryEmbedding;
import io.github.attn4j.Tensor;
import io.github.attn4j.internal.kernel.Gemm;
import io.github.attn4j.internal.kernel.MatrixView;
import io.github.attn4j.internal.kernel.PackedMatrix;

import ai.onnxruntime.OrtException;
import io.github.attn4j.jmh.peer.OnnxAttentionSession;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Two builds of attn4j in one JVM, timed in alternating slices: for A/B comparisons on a machine
 * whose speed drifts by more than the difference being measured (the shared development VM
 * drifts by 20 to 50% between JMH runs a few minutes apart). Each jar is loaded by a class loader
 * of its own, so each build has its own classes, static state and JIT-compiled code; the slices
 * run in the order A B B A A B B A ..., so both builds see the same drift; a slice's figure is its
 * median call, and the printed figure the median slice of each; beside B/A (the ratio of those
 * medians), {@code paired} is the median of the ratios of the two slices that ran next to each
 * other (A's k-th and B's k-th), with its quartiles in brackets: on a host whose speed moves in
 * phases of seconds, the ratio that a phase shift between the two medians does not move. Give
 * the library jars of the two builds (or two benchmark jars of this version of the tool): a
 * benchmarks jar of an older build brings its own workloads, whose slices report their mean call. This is not JMH: no forks and no
 * blackholes (each call's result is kept in a field), and both builds share one heap and one JIT.
 * Use it to decide between two builds, and JMH for the figures themselves.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -cp target/benchmarks.jar io.github.attn4j.jmh.SideBySide \
 *     old.jar new.jar 20 200 sdpa:64:512:none:1 mha:1:512:512:8:none:2 decode:BF16:4096:1
 * </pre>
 * Arguments: the two jars (each a {@code benchmarks.jar}, or any jar of the library: classes it
 * lacks, such as these workloads in a build older than this class, come from the running jar), seconds
 * per workload, milliseconds per slice, then workloads:
 * <ul>
 *   <li>{@code sdpa:hd:L:mask:threads}: {@code ScaledDotProductAttention.apply} over 8 heads of
 *       width hd, L queries and keys, mask {@code none}, {@code causal} or {@code padding} (as in the benchmarks);
 *       {@code sdpa:hd:L:mask:threads:B:H} over a batch of B rows of H heads;</li>
 *   <li>{@code mha:B:L:E:H:mask:threads}: {@code MultiHeadAttention.forward(x, mask, out)};
 *       {@code mha:B:L:E:H:mask:threads:KVH} with KVH key/value heads, and
 *       {@code mha:B:L:E:H:mask:threads:KVH:theta} also with RoPE of that base over whole heads;
 *       {@code mhaw:precision:B:L:...} is {@code mha:B:L:...} with projection weights stored in
 *       that precision ({@code F32}, {@code BF16}, {@code F16});</li>
 *   <li>{@code decode:precision:length:threads}: {@link CachePrecisionBenchmark}'s decode step
 *       (32 query heads over 8 key/value heads of 128, {@code embedDim = 64}); with a fifth field,
 *       {@code decode:precision:length:threads:kvHeads}, over that many key/value heads (32:
 *       plain multi-head attention, one query row per key/value head), and with a sixth,
 *       {@code decode:precision:length:threads:kvHeads:headDim}, heads of that width (96: Phi-3-mini);
 *       {@code decode:precision:length:threads:kvHeads:headDim:batch}, that many conversations of
 *       {@code length} tokens each, one new token per conversation;</li>
 *   <li>{@code ort:B:L:E:H:mask:threads}: ONNX Runtime on the layer of {@code mha} with the same
 *       fields ({@link OnnxRuntimeAttentionBenchmark}), and {@code ortcore:hd:L:threads} its
 *       attention op alone on the q, k, v of {@code sdpa} ({@link OnnxRuntimeAttentionCoreBenchmark},
 *       8 heads). With {@code 'mha:1:512:512:8:none:1|ort:1:512:512:8:none:1'} and one jar twice,
 *       B/A is attn4j's speed over ONNX Runtime's (the grid's ratio) with both in the same
 *       drift. Only one of the two loaders may load ONNX Runtime's native library, so give
 *       {@code ort} workloads to B only, and add {@code --enable-native-access=ALL-UNNAMED}.
 *       Its sessions do not spin ({@link OnnxAttentionSession#NO_SPIN}).</li>
 * </ul>
 * A workload {@code a|b} runs {@code a} on A and {@code b} on B: with the same jar twice, two
 * settings of one build, such as {@code 'sdpa:64:512:none:1|sdpa:64:512:none:2'} for the gain
 * of a second thread (the printed B/A is then the time ratio, its inverse the speed-up).
 *
 * <p>Before each workload, four warm-up slices (two per build); with a first argument
 * {@code --warmup=SECONDS}, at least that many seconds of them: C2 took about 8 s of a run to
 * compile both builds' kernels on the 2-vCPU Intel guest of session 35, longer than four slices.
 *
 * <p>{@code SideBySide --alone A.jar seconds sliceMillis workload...} times one build alone in
 * the JVM (the median slice of each workload, after four warm-up slices): run it once per build,
 * alternating the builds. Two builds in one JVM can hide what waking pool threads costs: an old
 * build's two-thread {@code sdpa:64:128:none:2} took 0.207 ms per call beside the new one and
 * 0.275 ms alone (jmh/README.md, "Two threads: packing in the task").
 */
public final class SideBySide {
    private SideBySide() {
    }

    public static void main(String[] args) throws Exception {
        double warmup = 0;
        if (args.length > 0 && args[0].startsWith("--warmup=")) {
            try {
                warmup = Double.parseDouble(args[0].substring("--warmup=".length()));
            } catch (NumberFormatException e) {
                warmup = Double.NaN;
            }
            if (!(warmup >= 0)) {
                throw new IllegalArgumentException("--warmup: expected seconds >= 0, got " + args[0]);
            }
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        if (args.length > 0 && args[0].equals("--alone")) {
            alone(args, warmup);
            return;
        }
        if (args.length < 5) {
            throw new IllegalArgumentException("usage: SideBySide [--warmup=SECONDS] A.jar B.jar seconds sliceMillis workload...; got "
                    + args.length + " arguments");
        }
        Method[] run = {workloads(args[0]), workloads(args[1])};
        // ONNX Runtime's spinning workers would take the cores of the slice after theirs.
        System.setProperty(OnnxAttentionSession.NO_SPIN, "true");
        double seconds = Double.parseDouble(args[2]);
        long slice = Long.parseLong(args[3]) * 1_000_000L;
        System.out.printf("A = %s, B = %s; median ms per call, median of slices of %s ms%n", args[0], args[1], args[3]);
        for (int w = 4; w < args.length; w++) {
            String spec = args[w];
            // "a|b": workload a on build A, b on build B (one jar twice: two settings of one build)
            String[] specs = spec.contains("|") ? spec.split("\\|", 2) : new String[] {spec, spec};
            List<List<Double>> times = List.of(new ArrayList<>(), new ArrayList<>());
            warmUp(run, specs, slice, warmup);
            long end = System.nanoTime() + (long) (seconds * 1e9);
            for (int i = 0; System.nanoTime() < end; i++) {
                int which = (i + 1) / 2 % 2;     // A B B A A B B A ...
                times.get(which).add((Double) run[which].invoke(null, specs[which], slice));
            }
            // Slice k of A and slice k of B ran next to each other: their ratio is taken in one phase of the host.
            int pairs = Math.min(times.get(0).size(), times.get(1).size());
            List<Double> ratios = new ArrayList<>();
            for (int k = 0; k < pairs; k++) {
                ratios.add(times.get(1).get(k) / times.get(0).get(k));
            }
            Collections.sort(ratios);
            double[] median = new double[2];
            for (int k = 0; k < 2; k++) {
                List<Double> t = times.get(k);
                Collections.sort(t);
                median[k] = t.get(t.size() / 2);
            }
            System.out.printf("%-30s A %10.4f  B %10.4f  B/A %.3f  paired %.3f [%.3f, %.3f]  (%d slices each; minima %.4f, %.4f)%n",
                    spec, median[0], median[1], median[1] / median[0], ratios.get(pairs / 2), ratios.get(pairs / 4),
                    ratios.get(pairs - 1 - pairs / 4), times.get(1).size(), times.get(0).get(0), times.get(1).get(0));
        }
    }

    /**
     * Warm-up slices before a workload is timed, taking the builds in turn (workload
     * {@code specs[i]} on {@code run[i]}): four, and as many more as {@code seconds} asks for.
     */
    private static void warmUp(Method[] run, String[] specs, long slice, double seconds) throws Exception {
        long until = System.nanoTime() + (long) (seconds * 1e9);
        for (int i = 0; i < 4 || System.nanoTime() < until; i++) {
            run[i % run.length].invoke(null, specs[i % run.length], slice);
        }
    }

    /**
     * {@link Workloads#run} of the build in {@code jar}, in a class loader of its own that searches
     * that jar first, then this tool's own jar, so a build older than this class still runs these
     * workloads on its own library classes.
     */
    private static Method workloads(String jar) throws Exception {
        URL self = SideBySide.class.getProtectionDomain().getCodeSource().getLocation();
        URLClassLoader loader = new URLClassLoader(new URL[]{Path.of(jar).toUri().toURL(), self},
                ClassLoader.getPlatformClassLoader());
        return loader.loadClass(Workloads.class.getName()).getMethod("run", String.class, long.class);
    }

    /** {@code --alone A.jar seconds sliceMillis workload...}: one build, the median slice per workload. */
    private static void alone(String[] args, double warmup) throws Exception {
        if (args.length < 5) {
            throw new IllegalArgumentException("usage: SideBySide [--warmup=SECONDS] --alone A.jar seconds sliceMillis workload...; got "
                    + args.length + " arguments");
        }
        Method run = workloads(args[1]);
        System.setProperty(OnnxAttentionSession.NO_SPIN, "true");
        double seconds = Double.parseDouble(args[2]);
        long slice = Long.parseLong(args[3]) * 1_000_000L;
        System.out.printf("A = %s alone; median ms per call, median of slices of %s ms%n", args[1], args[3]);
        for (int w = 4; w < args.length; w++) {
            warmUp(new Method[]{run}, new String[]{args[w]}, slice, warmup);
            List<Double> times = new ArrayList<>();
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                times.add((Double) run.invoke(null, args[w], slice));
            }
            Collections.sort(times);
            System.out.printf("%-30s A %10.4f  (%d slices; minimum %.4f)%n", args[w], times.get(times.size() / 2),
                    times.size(), times.get(0));
        }
    }

    /** The workloads, loaded once per build; {@link #run} returns milliseconds per call. */
    public static final class Workloads {
        private static final Map<String, Runnable> MADE = new HashMap<>();
        /** Each call's nanoseconds within a slice, reused. */
        private static long[] times = new long[1024];
        /** The last result, kept so that no call is dead code. */
        static volatile Object sink;

        private Workloads() {
        }

        /**
         * Calls the workload {@code spec} for about {@code nanos} (at least once); the median
         * call's milliseconds. A median rather than the mean: the development VM stalls now and
         * then for up to a second, and in bad phases the means of 200-ms slices of a 0.27 ms call
         * read 20 to 75 ms, on both builds alike (jmh/README.md, "Lingering helpers").
         */
        public static double run(String spec, long nanos) {
            Runnable call = MADE.computeIfAbsent(spec, Workloads::make);
            long[] t = times;
            int calls = 0;
            long start = System.nanoTime();
            long last = start;
            do {
                call.run();
                long now = System.nanoTime();
                if (calls == t.length) {
                    t = times = Arrays.copyOf(t, 2 * calls);
                }
                t[calls++] = now - last;
                last = now;
            } while (last - start < nanos);
            Arrays.sort(t, 0, calls);
            return t[calls / 2] / 1e6;
        }

        private static Runnable make(String spec) {
            String[] p = spec.split(":");
            SplittableRandom random = new SplittableRandom(3);
            switch (p[0]) {
                case "sdpa" -> {
                    if (p.length != 7) {
                        check(spec, p, 5);
                    }
                    int hd = Integer.parseInt(p[1]), length = Integer.parseInt(p[2]), threads = Integer.parseInt(p[4]);
                    int batch = p.length == 7 ? Integer.parseInt(p[5]) : 1, heads = p.length == 7 ? Integer.parseInt(p[6]) : 8;
                    Tensor q = Inputs.uniform(random, batch, heads, length, hd);
                    Tensor k = Inputs.uniform(random, batch, heads, length, hd);
                    Tensor v = Inputs.uniform(random, batch, heads, length, hd);
                    AttentionMask mask = Inputs.mask(p[3], batch, length);
                    float scale = (float) (1 / Math.sqrt(hd));
                    return () -> sink = ScaledDotProductAttention.apply(q, k, v, mask, scale, threads);
                }
                case "mha", "mhaw" -> {
                    // mhaw:precision:B:L:... is mha:B:L:... with projection weights of that precision.
                    Precision weights = p[0].equals("mhaw") ? Precision.valueOf(p[1]) : Precision.F32;
                    if (p[0].equals("mhaw")) {
                        p = Stream.concat(Stream.of("mha"), Arrays.stream(p, 2, p.length)).toArray(String[]::new);
                    }
                    if (p.length != 8 && p.length != 9) {
                        check(spec, p, 7);
                    }
                    int batch = Integer.parseInt(p[1]), length = Integer.parseInt(p[2]), embed = Integer.parseInt(p[3]);
                    int heads = Integer.parseInt(p[4]);
                    var builder = MultiHeadAttention.builder(embed, heads).seed(42).threads(Integer.parseInt(p[6])).weightPrecision(weights);
                    if (p.length >= 8) {
                        builder.kvHeads(Integer.parseInt(p[7]));
                    }
                    if (p.length == 9) {
                        builder.rotary(RotaryEmbedding.of(embed / heads, Double.parseDouble(p[8])));
                    }
                    MultiHeadAttention module = builder.build();
                    Tensor x = Inputs.uniform(random, batch, length, embed);
                    Tensor out = Tensor.zeros(batch, length, embed);
                    AttentionMask mask = Inputs.mask(p[5], batch, length);
                    return () -> sink = module.forward(x, mask, out);
                }
                case "decode" -> {
                    if (p.length < 5 || p.length > 7) {
                        check(spec, p, 4);
                    }
                    int length = Integer.parseInt(p[2]);
                    int kvHeads = p.length >= 5 ? Integer.parseInt(p[4]) : 8;
                    int hd = p.length >= 6 ? Integer.parseInt(p[5]) : 128;
                    int batch = p.length == 7 ? Integer.parseInt(p[6]) : 1;
                    MultiHeadAttention module = MultiHeadAttention.builder(64, 32).headDim(hd).kvHeads(kvHeads).seed(1)
                            .threads(Integer.parseInt(p[3])).build();
                    KvCache cache = module.newKvCache(batch, length + 1, Precision.valueOf(p[1]));
                    cache.append(Inputs.uniform(random, batch, kvHeads, length, hd), Inputs.uniform(random, batch, kvHeads, length, hd));
                    Tensor token = Inputs.uniform(random, batch, 1, 64);
                    return () -> {
                        cache.truncate(length);
                        sink = module.forwardCached(token, cache);
                    };
                }
                case "gemm" -> {
                    // gemm:M:N:K[:threads]: C = A B with B packed once, as GemmBenchmark's packed cases.
                    if (p.length != 5) {
                        check(spec, p, 4);
                    }
                    int m = Integer.parseInt(p[1]), n = Integer.parseInt(p[2]), k = Integer.parseInt(p[3]);
                    int threads = p.length == 5 ? Integer.parseInt(p[4]) : 1;
                    MatrixView a = MatrixView.rowMajor(GemmBenchmark.random(m * k, 1), m, k);
                    PackedMatrix b = Gemm.pack(MatrixView.rowMajor(GemmBenchmark.random(k * n, 2), k, n));
                    float[] c = new float[m * n];
                    return () -> {
                        Gemm.multiply(a, b, c, 0, n, false, threads);
                        sink = c;
                    };
                }
                case "ort" -> {
                    check(spec, p, 7);
                    OnnxRuntimeAttentionBenchmark peer = new OnnxRuntimeAttentionBenchmark();
                    peer.batch = Integer.parseInt(p[1]);
                    peer.seqLen = Integer.parseInt(p[2]);
                    peer.embedDim = Integer.parseInt(p[3]);
                    peer.numHeads = Integer.parseInt(p[4]);
                    peer.mask = p[5];
                    peer.threads = Integer.parseInt(p[6]);
                    return peer(() -> {
                        peer.setUp();
                        return peer;
                    }, peer::run);
                }
                case "ortcore" -> {
                    check(spec, p, 4);
                    OnnxRuntimeAttentionCoreBenchmark peer = new OnnxRuntimeAttentionCoreBenchmark();
                    peer.heads = 8;
                    peer.headDim = Integer.parseInt(p[1]);
                    peer.seqLen = Integer.parseInt(p[2]);
                    peer.threads = Integer.parseInt(p[3]);
                    return peer(() -> {
                        peer.setUp();
                        return peer;
                    }, peer::run);
                }
                default -> throw new IllegalArgumentException(
                        "workload: expected sdpa:..., mha:..., decode:..., gemm:..., ort:... or ortcore:..., got " + spec);
            }
        }

        /** An ONNX Runtime call as a workload: {@code setUp} once (it checks the output against attn4j's). */
        private static Runnable peer(OrtCall setUp, OrtCall call) {
            try {
                setUp.run();
            } catch (OrtException e) {
                throw new IllegalStateException("ONNX Runtime set-up failed", e);
            }
            return () -> {
                try {
                    sink = call.run();
                } catch (OrtException e) {
                    throw new IllegalStateException("ONNX Runtime call failed", e);
                }
            };
        }

        /** A call into ONNX Runtime, which throws its checked exception. */
        private interface OrtCall {
            Object run() throws OrtException;
        }

        private static void check(String spec, String[] parts, int expected) {
            if (parts.length != expected) {
                throw new IllegalArgumentException("workload " + spec + ": expected " + expected + " fields separated by ':', got "
                        + parts.length);
            }
        }
    }
}
