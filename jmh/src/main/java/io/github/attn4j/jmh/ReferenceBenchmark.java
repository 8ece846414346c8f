package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.Tensor;
import io.github.attn4j.reference.ReferenceAttention;
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
 * The scalar reference on the same self-attention as {@link MultiHeadAttentionBenchmark}, for
 * scale. Its parameters have their own names so the grid's lengths do not reach it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx4g"})
public class ReferenceBenchmark {
    @Param({"8"})
    public int refHeads;

    @Param({"128"})
    public int refLength;

    @Param({"512"})
    public int refEmbedDim;

    private ReferenceAttention.Parameters parameters;
    private Tensor x;

    @Setup
    public void setUp() {
        SplittableRandom random = new SplittableRandom(3);
        int e = refEmbedDim, hd = e / refHeads;
        float bound = (float) (1 / Math.sqrt(e));
        parameters = new ReferenceAttention.Parameters(e, refHeads, refHeads, hd, (float) (1 / Math.sqrt(hd)),
                weights(random, e * e, bound), weights(random, e * e, bound), weights(random, e * e, bound),
                weights(random, e * e, bound), new float[e], new float[e], new float[e], new float[e]);
        x = Inputs.uniform(random, 1, refLength, e);
    }

    @Benchmark
    public AttentionOutput forward() {
        return ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), parameters);
    }

    private static float[] weights(SplittableRandom random, int n, float bound) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = (float) random.nextDouble(-bound, bound);
        }
        return w;
    }
}
