package io.github.attn4j.jmh;

import io.github.attn4j.internal.kernel.TileProducts;
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
 * The attention core's two products on one full tile, alone ({@link TileProducts}): the score
 * product (query tile times a key tile) and the value product (weights times a value tile), in
 * nanoseconds per call, on one thread, with every operand in L1 or L2 as in the core. Each does
 * {@code 2 · BQ · BK · hd} flops ({@link #flops}); run it with {@link FmaPeakBenchmark} to get the
 * micro-kernel's own share of the FMA ceiling, the best the attention core could reach:
 * <pre>
 * java -jar target/benchmarks.jar "FmaPeakBenchmark|TileProductBenchmark" -f 1 -wi 3 -i 7 -w 1s -r 1s
 * </pre>
 * Set against {@link ScaledDotProductAttentionBenchmark}'s time for the same flops, it splits the
 * core's time into the two products and everything else.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class TileProductBenchmark {
    @Param({"32", "64"})
    public int headDim;

    private TileProducts products;
    private float[] query;
    private float[] scores;
    private float[] weights;
    private float[] out;

    /** Flops of one call of either product at head width {@code hd}. */
    public static double flops(int hd) {
        return 2.0 * TileProducts.queryRows() * TileProducts.keys() * hd;
    }

    @Setup
    public void setUp() {
        int rows = TileProducts.queryRows();
        int keys = TileProducts.keys();
        SplittableRandom random = new SplittableRandom(5);
        query = uniform(random, rows * headDim);
        products = new TileProducts(uniform(random, keys * headDim), headDim, uniform(random, keys * headDim), headDim);
        scores = new float[rows * keys];
        // Weights in [0, 1) and an output that stays small: the value product adds into it.
        weights = uniform(random, rows * keys);
        for (int i = 0; i < weights.length; i++) {
            weights[i] = Math.abs(weights[i]);
        }
        out = new float[rows * products.outputStride()];
        products.query(query);
    }

    private static float[] uniform(SplittableRandom random, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (random.nextDouble() * 2 - 1);
        }
        return x;
    }

    @Benchmark
    public float[] scores() {
        products.scores(scores);
        return scores;
    }

    /** Adds into the same output every call, as the core does over its key tiles (it grows linearly, far from overflow). */
    @Benchmark
    public float[] values() {
        products.values(weights, out);
        return out;
    }
}
