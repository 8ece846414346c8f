package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.ScaledDotProductAttention;
import io.github.attn4j.Tensor;
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
import org.openjdk.jmh.annotations.Warmup;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Long-context attention on projected heads, {@code q, k, v (1, 8, seqLen, 128)} (8 query heads,
 * 8 key/value heads), through {@code ScaledDotProductAttention.builder().threads(t).build().attend}:
 * {@link #causal} against {@link #slidingWindow}, {@code causal().and(slidingWindow(window))}.
 *
 * <p>A causal call at {@code seqLen = 16384} does {@code 2·L²·H·hd} = 275 GFLOP (half of the
 * unmasked {@code 4·L²·H·hd}), about 5 s on one core, hence single shots. The window keeps
 * {@code L·W − W(W−1)/2} of the {@code L(L+1)/2} causal (query, key) pairs: at L = 16384 and
 * W = 4096 that is 0.437 of the causal work, so skipping whole key tiles outside the window can
 * bring the time to about 0.44x the causal time, not below; reaching ≤ 0.35x needs the causal
 * call itself to be slower than its pair count (e.g. diagonal tiles' overhead), or a smaller window
 * (W = 2048 keeps 0.234). {@code seqLen = 4096} is for smoke runs (there a 4096 window is the
 * causal mask; use {@code -p window=1024}). Smoke run there (one thread, loaded 2-core machine,
 * one warm-up shot): causal 1301 ms, window 1024 606 ms, 0.47x for a kept fraction of 0.437.
 *
 * <p>Full run: {@code java -jar target/benchmarks.jar SlidingWindowBenchmark -f 1}
 * (2 warm-up and 5 measured shots per method and thread count).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class SlidingWindowBenchmark {
    static final int HEADS = 8;
    static final int HEAD_DIM = 128;

    @Param({"16384"})
    public int seqLen;

    @Param({"4096"})
    public int window;

    @Param({"1", "2"})
    public int threads;

    private ScaledDotProductAttention attention;
    private Tensor q;
    private Tensor k;
    private Tensor v;
    private AttentionMask causal;
    private AttentionMask windowed;

    @Setup
    public void setUp() {
        SplittableRandom random = new SplittableRandom(13);
        q = Inputs.uniform(random, 1, HEADS, seqLen, HEAD_DIM);
        k = Inputs.uniform(random, 1, HEADS, seqLen, HEAD_DIM);
        v = Inputs.uniform(random, 1, HEADS, seqLen, HEAD_DIM);
        attention = ScaledDotProductAttention.builder().threads(threads).build();
        causal = AttentionMask.causal();
        windowed = AttentionMask.causal().and(AttentionMask.slidingWindow(window));
    }

    /** Fraction of the causal (query, key) pairs the window keeps: {@code (L·W − W(W−1)/2) / (L(L+1)/2)} for {@code W ≤ L}. */
    public static double keptFraction(long seqLen, long window) {
        long w = Math.min(window, seqLen);
        return (seqLen * w - w * (w - 1) / 2.0) / (seqLen * (seqLen + 1) / 2.0);
    }

    @Benchmark
    public Tensor causal() {
        return attention.attend(q, k, v, causal);
    }

    @Benchmark
    public Tensor slidingWindow() {
        return attention.attend(q, k, v, windowed);
    }
}
