package io.github.attn4j.jmh;

import ai.onnxruntime.OrtException;
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
import java.util.concurrent.TimeUnit;

/**
 * Peer comparison for {@link ScaledDotProductAttentionBenchmark}, unmasked: the same q, k, v
 * (same seed and values) run by ONNX Runtime's {@code com.microsoft.MultiHeadAttention} op alone
 * ({@link OnnxModel#attentionCore}) with {@code threads} intra-op threads. The op takes its heads
 * token-major, {@code (1, L, H·hd)}, where attn4j takes {@code (1, H, L, hd)}: each side gets its
 * own layout, laid out once in the setup. The setup checks ONNX Runtime's output against
 * attn4j's; a mismatch stops the benchmark with an {@link IllegalStateException}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g", "--enable-native-access=ALL-UNNAMED"})
public class OnnxRuntimeAttentionCoreBenchmark {
    @Param({"8"})
    public int heads;

    @Param({"64"})
    public int headDim;

    @Param({"512", "2048"})
    public int seqLen;

    /** ONNX Runtime intra-op threads (attn4j threads on the other side). */
    @Param({"1"})
    public int threads;

    private OnnxAttentionSession session;

    /** Lays out the inputs of {@link ScaledDotProductAttentionBenchmark} token-major, runs the op once and checks it. */
    @Setup
    public void setUp() throws OrtException {
        ScaledDotProductAttentionBenchmark attn4j = new ScaledDotProductAttentionBenchmark();
        attn4j.heads = heads;
        attn4j.headDim = headDim;
        attn4j.seqLen = seqLen;
        attn4j.mask = "none";
        attn4j.threads = threads;
        attn4j.setUp();
        float[] expected = tokenMajor(attn4j.attention().toArray(), heads, seqLen, headDim);
        session = OnnxAttentionSession.attentionCore(OnnxModel.attentionCore(heads, heads * headDim), threads,
                tokenMajor(attn4j.q().toArray(), heads, seqLen, headDim), tokenMajor(attn4j.k().toArray(), heads, seqLen, headDim),
                tokenMajor(attn4j.v().toArray(), heads, seqLen, headDim), 1, seqLen, heads * headDim);
        session.run();
        OnnxRuntimeAttentionBenchmark.checkSameOutput(expected, session.output(), headDim + seqLen,
                "ONNX Runtime vs attn4j, attention core H=" + heads + " hd=" + headDim + " L=" + seqLen);
    }

    @TearDown
    public void tearDown() throws OrtException {
        session.close();
    }

    @Benchmark
    public FloatBuffer run() throws OrtException {
        return session.run();
    }

    /** {@code (H, L, d)} heads-major as {@code (L, H·d)} token-major. */
    static float[] tokenMajor(float[] headsMajor, int heads, int length, int d) {
        float[] t = new float[headsMajor.length];
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < length; i++) {
                System.arraycopy(headsMajor, (h * length + i) * d, t, (i * heads + h) * d, d);
            }
        }
        return t;
    }
}
