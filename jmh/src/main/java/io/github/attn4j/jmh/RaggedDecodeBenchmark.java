package io.github.attn4j.jmh;

import io.github.attn4j.KvCache;
import io.github.attn4j.MultiHeadAttention;
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
import org.openjdk.jmh.infra.Blackhole;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Continuous batching: one decode step for 8 sequences whose caches hold different lengths,
 * {@code longest · (1, 2, 4, 6, 8, 16, 24, 32) / 32} tokens (512, 1024, 2048, 3072, 4096, 8192,
 * 12288 and 16384 at the default {@code longest = 16384}; 47616 tokens, 372 MiB of keys and values
 * in all).
 *
 * <ul>
 *   <li>{@link #batched}: one {@code forwardCached} call on {@code x (8, 1, E)} over one cache of
 *       batch 8 whose rows hold those lengths;</li>
 *   <li>{@link #oneByOne}: the same 8 rows as 8 caches of batch 1, decoded by 8 calls.</li>
 * </ul>
 * Both cut every row back to its length after the step. The batched call should cost about the
 * one-by-one sum (or less: the projections see 8 rows at once); a time near 8 times the longest
 * row's would mean rows are padded to the longest.
 *
 * <p>Shape: 32 query heads of 128 sharing 8 key/value heads as in Llama 3 8B, no biases, but
 * with {@code embedDim = 64} by default (projections of 2.6 MB instead of 168 MB) so the step is
 * the attention over the caches; {@code -p embedDim=4096} gives the full layer. No RoPE: it costs
 * nothing next to the cache reads. Bytes per second = {@code 2 · 4 · 8 · 128 ·} (sum of the
 * lengths) / time, to compare with {@link MemoryBandwidthBenchmark} at 128+ MiB.
 *
 * <p>Full run: {@code java -jar target/benchmarks.jar RaggedDecodeBenchmark -f 1}; smoke:
 * {@code -p longest=2048 -p threads=1 -f 1 -wi 0 -i 1 -r 1s}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector", "-Xmx6g"})
public class RaggedDecodeBenchmark {
    /** Row lengths in 32nds of {@code longest}. */
    static final int[] PARTS = {1, 2, 4, 6, 8, 16, 24, 32};

    /** Length of the longest row; the others scale with it. Must be a multiple of 32. */
    @Param({"16384"})
    public int longest;

    @Param({"1", "2"})
    public int threads;

    @Param({"64"})
    public int embedDim;

    private int[] lengths;
    private MultiHeadAttention module;
    private KvCache batchCache;
    private Tensor batchTokens;
    private KvCache[] rowCaches;
    private Tensor[] rowTokens;

    @Setup
    public void setUp() {
        if (longest % 32 != 0) {
            throw new IllegalArgumentException("longest: expected a multiple of 32, got " + longest);
        }
        int rows = PARTS.length;
        lengths = new int[rows];
        for (int b = 0; b < rows; b++) {
            lengths[b] = longest / 32 * PARTS[b];
        }
        module = MultiHeadAttention.builder(embedDim, 32).kvHeads(8).headDim(128).bias(false)
                .seed(1).threads(threads).build();
        SplittableRandom random = new SplittableRandom(9);
        batchCache = module.newKvCache(rows, longest + 1);
        CacheFill.fill(batchCache, lengths, random);
        batchTokens = Inputs.uniform(random, rows, 1, embedDim);
        rowCaches = new KvCache[rows];
        rowTokens = new Tensor[rows];
        float[] all = batchTokens.toArray();
        for (int b = 0; b < rows; b++) {
            rowCaches[b] = module.newKvCache(1, lengths[b] + 1);
            CacheFill.fill(rowCaches[b], new int[]{lengths[b]}, random);
            // The same token as row b of the batched call.
            rowTokens[b] = Tensor.of(java.util.Arrays.copyOfRange(all, b * embedDim, (b + 1) * embedDim), 1, 1, embedDim);
        }
    }

    @Benchmark
    public Tensor batched() {
        Tensor out = module.forwardCached(batchTokens, batchCache);
        for (int b = 0; b < lengths.length; b++) {
            batchCache.truncate(b, lengths[b]);
        }
        return out;
    }

    @Benchmark
    public void oneByOne(Blackhole bh) {
        for (int b = 0; b < lengths.length; b++) {
            bh.consume(module.forwardCached(rowTokens[b], rowCaches[b]));
            rowCaches[b].truncate(0, lengths[b]);
        }
    }
}
