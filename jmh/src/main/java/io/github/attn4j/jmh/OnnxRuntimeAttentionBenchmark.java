package io.github.attn4j.jmh;

import ai.onnxruntime.OrtException;
import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Tensor;
import io.github.attn4j.jmh.peer.OnnxAttentionSession;
import io.github.attn4j.jmh.peer.OnnxModel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.FloatBuffer;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Peer comparison: the self-attention of {@link MultiHeadAttentionBenchmark} (same parameters,
 * same input {@code x}, same weights as {@code MultiHeadAttention.builder(E, H).seed(42)}, no
 * biases) run by ONNX Runtime ({@code com.microsoft.onnxruntime:onnxruntime}, a benchmark-scope
 * dependency) on its CPU execution provider, one {@code session.run} per call. The graph is
 * {@link OnnxModel}: three MatMul projections, ONNX Runtime's fastest CPU attention op for the
 * mask ({@code com.microsoft.MultiHeadAttention}, or {@code GroupQueryAttention} when causal) and
 * the output MatMul; the session has {@code threads} intra-op threads, one
 * inter-op thread and every graph optimization. Effective GFLOP/s are counted as for attn4j,
 * {@link Flops#attention}(batch, seqLen, embedDim) / time.
 *
 * <p>The setup runs the model once and checks its output against attn4j's {@code forward} on the
 * same input ({@link #checkSameOutput}); a mismatch stops the benchmark with an
 * {@link IllegalStateException}. Run both sides in one JMH run, for example
 * {@code java -jar target/benchmarks.jar "OnnxRuntimeAttentionBenchmark|MultiHeadAttentionBenchmark"
 * -p numHeads=8 -p seqLen=512 -p threads=1 -f 1 -wi 3 -i 5 -w 1s -r 1s}. The fork allows native
 * access, which loading ONNX Runtime's JNI library needs (JDK 24+ warns about it otherwise).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g", "--enable-native-access=ALL-UNNAMED"})
public class OnnxRuntimeAttentionBenchmark {
    /** Seed of the weights, as in {@link MultiHeadAttentionBenchmark}. */
    static final long WEIGHT_SEED = 42;

    @Param({"1", "8", "16"})
    public int numHeads;

    @Param({"128", "512", "2048"})
    public int seqLen;

    /** {@code none}, {@code causal}, or {@code padding}: a key padding mask over the last quarter of keys. */
    @Param({"none", "causal", "padding"})
    public String mask;

    @Param({"512"})
    public int embedDim;

    @Param({"1"})
    public int batch;

    /** ONNX Runtime intra-op threads (attn4j module threads on the other side). */
    @Param({"1"})
    public int threads;

    private OnnxAttentionSession session;

    /** Builds the model and the session, runs it once and checks the output against attn4j's. */
    @Setup
    public void setUp() throws OrtException {
        Tensor x = Inputs.uniform(new SplittableRandom(7), batch, seqLen, embedDim);
        MultiHeadAttention module = MultiHeadAttention.builder(embedDim, numHeads).seed(WEIGHT_SEED).threads(threads).build();
        float[] expected = module.forward(x, Inputs.mask(mask, batch, seqLen)).toArray();

        float[][] w = seededWeights(embedDim, numHeads, WEIGHT_SEED);
        OnnxModel.Mask kind = OnnxModel.Mask.of(mask);
        byte[] model = OnnxModel.multiHeadAttention(embedDim, numHeads, kind, w[0], null, w[1], null);
        session = new OnnxAttentionSession(model, kind, threads, x.toArray(), batch, seqLen, embedDim,
                kind == OnnxModel.Mask.PADDING ? Inputs.paddedKeys(batch, seqLen) : null);
        session.run();
        checkSameOutput(expected, session.output(), reductionLength(embedDim, numHeads, seqLen),
                "ONNX Runtime vs attn4j, H=" + numHeads + " L=" + seqLen + " E=" + embedDim + " B=" + batch + " mask=" + mask);
    }

    @TearDown
    public void tearDown() throws OrtException {
        session.close();
    }

    @Benchmark
    public FloatBuffer run() throws OrtException {
        return session.run();
    }

    /**
     * The weights {@code MultiHeadAttention.builder(embedDim, numHeads).seed(seed)} draws when
     * given none, in PyTorch's layout: {@code {in_proj_weight (3E, E), out_proj.weight (E, E)}}.
     * As the builder documents: one {@code SplittableRandom(seed)} draws the q, k and v rows,
     * uniform in {@code ±√(6 / (E + 3E))} (Xavier over the stacked matrix), then the output
     * weight, uniform in {@code ±1/√E}; no biases.
     */
    static float[][] seededWeights(int embedDim, int numHeads, long seed) {
        if (embedDim % numHeads != 0) {
            throw new IllegalArgumentException("embedDim: expected a multiple of numHeads = " + numHeads + ", got " + embedDim);
        }
        SplittableRandom random = new SplittableRandom(seed);
        float qkvBound = (float) Math.sqrt(6.0 / (embedDim + 3.0 * embedDim));
        float outBound = (float) (1.0 / Math.sqrt(embedDim));
        return new float[][]{uniform(random, 3 * embedDim * embedDim, qkvBound), uniform(random, embedDim * embedDim, outBound)};
    }

    private static float[] uniform(SplittableRandom random, int n, float bound) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = (float) random.nextDouble(-bound, bound);
        }
        return w;
    }

    /**
     * Length of the float reductions an output element passes through: the input projection
     * (E), the scores (head width E/H), the weighted values (L keys) and the output projection (E).
     */
    static int reductionLength(int embedDim, int numHeads, int seqLen) {
        return embedDim + embedDim / numHeads + seqLen + embedDim;
    }

    /**
     * Checks two float computations of the same attention output against each other. Each lies
     * within {@code 4·ε·n·(1 + max|y|)} of the exact result for reduction length {@code n}
     * ({@code ε = 2⁻²³}, the bound the test suite holds attn4j to against the double-precision
     * reference), so they may differ by twice that.
     *
     * @throws IllegalStateException naming the first element out of bounds
     */
    static void checkSameOutput(float[] attn4j, float[] onnx, int reductionLength, String what) {
        if (attn4j.length != onnx.length) {
            throw new IllegalStateException(what + ": attn4j gives " + attn4j.length + " elements, ONNX Runtime " + onnx.length);
        }
        double max = 0;
        for (float v : attn4j) {
            max = Math.max(max, Math.abs(v));
        }
        double allowed = 2 * 4 * Math.ulp(1f) * reductionLength * (1 + max);
        for (int i = 0; i < attn4j.length; i++) {
            double diff = Math.abs((double) attn4j[i] - onnx[i]);
            if (!(diff <= allowed)) {
                throw new IllegalStateException(String.format(Locale.ROOT,
                        "%s: y[%d] = %s from ONNX Runtime, %s from attn4j (|diff| %.3g > allowed %.3g, reduction length %d)",
                        what, i, onnx[i], attn4j[i], diff, allowed, reductionLength));
            }
        }
    }
}
