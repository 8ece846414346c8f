package io.github.attn4j.consumer;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.Embedding;
import io.github.attn4j.KvCache;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Tensor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import java.util.stream.Collectors;

/**
 * What a downstream application does with the published jar: the README quickstart and a short
 * decode loop. Exits with status 1 (through an uncaught exception) when a check fails.
 *
 * <p>Arguments: {@code classpath} or {@code modulepath}, how this run was launched (checked
 * against the module attn4j was loaded in), and {@code vector} or {@code scalar}, the kernel
 * path attn4j must report in its one log line.
 */
public final class Main {
    /** attn4j logs its kernel choice through System.Logger, which lands here (java.logging). */
    private static final Logger ATTN4J_LOG = Logger.getLogger("io.github.attn4j");
    private static final List<String> LOGGED = new ArrayList<>();

    private Main() {
    }

    public static void main(String[] args) {
        String launch = args[0];
        String path = args[1];
        ATTN4J_LOG.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                synchronized (LOGGED) {
                    LOGGED.add(new SimpleFormatter().formatMessage(record));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
        checkModule(launch);
        quickstart();
        decodeLoop();
        List<String> kernels;
        synchronized (LOGGED) {
            kernels = LOGGED.stream().filter(line -> line.startsWith("attn4j kernels: ")).toList();
        }
        check(kernels.size() == 1, "one kernel log line, got " + kernels);
        String expected = path.equals("vector") ? "attn4j kernels: Vector API" : "attn4j kernels: scalar";
        check(kernels.get(0).startsWith(expected), "expected '" + expected + "...', got '" + kernels.get(0) + "'");
        System.out.println("attn4j consumer (" + launch + "): ok, " + kernels.get(0));
    }

    /** On the module path attn4j is the named module io.github.attn4j with its two exports; on the class path it is unnamed. */
    private static void checkModule(String launch) {
        Module attn4j = MultiHeadAttention.class.getModule();
        if (launch.equals("modulepath")) {
            check(attn4j.isNamed() && attn4j.getName().equals("io.github.attn4j"), "attn4j is the named module io.github.attn4j, not " + attn4j);
            Set<String> exports = attn4j.getDescriptor().exports().stream().map(e -> e.source()).collect(Collectors.toSet());
            check(exports.equals(Set.of("io.github.attn4j", "io.github.attn4j.reference")), "exports " + exports);
            check(Main.class.getModule().getName().equals("attn4j.consumer"), "the consumer runs as a module");
        } else {
            check(!attn4j.isNamed(), "attn4j is on the class path, not in " + attn4j);
        }
    }

    /** The README quickstart, line for line, then its shapes and weights. */
    private static void quickstart() {
        int vocab = 1000, embedDim = 512, heads = 8;
        java.util.Random random = new java.util.Random(1);

        int[][] ragged = new int[10][];                       // ten sentences of 1..20 token ids (1..999)
        for (int b = 0; b < 10; b++) {
            ragged[b] = random.ints(b == 0 ? 20 : 1 + random.nextInt(20), 1, vocab).toArray();
        }
        int[][] ids = Embedding.pad(ragged, 0);               // (10, 20), padded with id 0

        float[] table = new float[vocab * embedDim];          // your trained nn.Embedding weight
        for (int i = 0; i < table.length; i++) table[i] = (float) random.nextGaussian();
        Tensor x = Embedding.of(table, vocab, embedDim).lookup(ids);          // (10, 20, 512)

        MultiHeadAttention mha = MultiHeadAttention.builder(embedDim, heads).seed(0).build();
        Tensor y = mha.forward(x, AttentionMask.padding(ids, 0));             // (10, 20, 512)

        AttentionOutput withWeights = mha.forwardWithWeights(x, x, x, AttentionMask.padding(ids, 0));
        Tensor weights = withWeights.weights();                                // (10, 8, 20, 20), per head

        check(Arrays.equals(y.shape(), new int[]{10, 20, 512}), "output shape " + Arrays.toString(y.shape()));
        check(Arrays.equals(weights.shape(), new int[]{10, 8, 20, 20}), "weights shape " + Arrays.toString(weights.shape()));
        for (float v : y.toArray()) {
            check(Float.isFinite(v), "finite output");
        }
        for (int b = 0; b < 10; b++) {
            for (int h = 0; h < heads; h++) {
                for (int i = 0; i < 20; i++) {
                    double sum = 0;
                    for (int j = 0; j < 20; j++) {
                        float w = weights.get(b, h, i, j);
                        boolean pad = j >= ragged[b].length;
                        check(pad ? w == 0f : w > 0f, "weight of key " + j + " in row " + b + ": " + w);
                        sum += w;
                    }
                    check(Math.abs(sum - 1) < 1e-5, "weights of row " + b + " head " + h + " query " + i + " sum to " + sum);
                }
            }
        }
    }

    /**
     * Eight one-token decode steps through a KvCache against one causal forward pass over the
     * same eight tokens: each step's output equals that token's row within float rounding,
     * {@code 4·ε·n·(1 + max|y|)} for the reduction length {@code n = 2E + L + hd} (the bound of
     * attn4j's own tests).
     */
    private static void decodeLoop() {
        int e = 64, steps = 8;
        MultiHeadAttention m = MultiHeadAttention.builder(64, 4).kvHeads(2).seed(1).build();
        KvCache c = m.newKvCache(1, 16);
        SplittableRandom random = new SplittableRandom(7);
        float[] xs = new float[steps * e];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = (float) random.nextDouble(-1, 1);
        }
        float[] full = m.forward(Tensor.of(xs, 1, steps, e), AttentionMask.causal()).toArray();
        double max = 0;
        for (float v : full) {
            max = Math.max(max, Math.abs(v));
        }
        double tolerance = 4 * Math.ulp(1f) * (2 * e + steps + m.headDim()) * (1 + max);
        for (int t = 0; t < steps; t++) {
            Tensor xt = Tensor.of(Arrays.copyOfRange(xs, t * e, (t + 1) * e), 1, 1, e);
            float[] y = m.forwardCached(xt, c).toArray();
            check(y.length == e, "step output length " + y.length);
            for (int j = 0; j < e; j++) {
                double diff = Math.abs((double) y[j] - full[t * e + j]);
                check(diff <= tolerance, "step " + t + " element " + j + ": cached " + y[j] + ", full " + full[t * e + j]
                        + " (|diff| " + diff + " > " + tolerance + ")");
            }
            check(c.length() == t + 1, "cache length " + c.length() + " after step " + t);
        }
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
