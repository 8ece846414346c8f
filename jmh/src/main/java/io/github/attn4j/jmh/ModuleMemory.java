package io.github.attn4j.jmh;

import io.github.attn4j.MultiHeadAttention;
import io.github.attn4j.Precision;
import io.github.attn4j.RotaryEmbedding;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.SplittableRandom;

/**
 * Heap a built module retains beyond the weights its caller holds: the Llama-3-8B-shaped layer
 * of {@link LlamaLayerBenchmark} ({@code E = 4096}, 32 query heads and 8 key/value heads of 128, no
 * biases, Llama 3 RoPE) built with {@code weights(wq, wk, wv, wo)} from random arrays the caller
 * made and keeps: {@code 4 · 4096 · (4096 + 1024 + 1024 + 4096)} bytes, 168 MB.
 *
 * <p>Heap in use is read from {@link MemoryMXBean} after a few {@link System#gc()} calls, once
 * with the weight arrays allocated and once more after {@code build()}; the difference is what
 * the module retains (its packed copies of the weights and anything else). Printed: the weight
 * bytes, the retained bytes and their ratio. Target: at most 1.1 (one packed copy of each weight
 * and little else); with the weights stored as BF16 or F16 (first argument, the
 * {@code weightPrecision}; default F32), at most 0.55 of the float32 weight bytes.
 *
 * <p>Run: {@code java --add-modules jdk.incubator.vector -Xmx4g -cp target/benchmarks.jar io.github.attn4j.jmh.ModuleMemory [F32|BF16|F16]}.
 */
public final class ModuleMemory {
    private ModuleMemory() {
    }

    public static void main(String[] args) throws InterruptedException {
        Precision precision = args.length > 0 ? Precision.valueOf(args[0]) : Precision.F32;
        int e = LlamaLayerBenchmark.EMBED_DIM;
        int qWidth = LlamaLayerBenchmark.HEADS * LlamaLayerBenchmark.HEAD_DIM;
        int kvWidth = LlamaLayerBenchmark.KV_HEADS * LlamaLayerBenchmark.HEAD_DIM;
        SplittableRandom random = new SplittableRandom(17);
        float[] wq = random(random, qWidth * e, 1 / Math.sqrt(e));
        float[] wk = random(random, kvWidth * e, 1 / Math.sqrt(e));
        float[] wv = random(random, kvWidth * e, 1 / Math.sqrt(e));
        float[] wo = random(random, e * qWidth, 1 / Math.sqrt(qWidth));
        long weightBytes = 4L * (wq.length + wk.length + wv.length + wo.length);

        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long before = settledHeapUsed(memory);
        var builder = MultiHeadAttention.builder(e, LlamaLayerBenchmark.HEADS)
                .kvHeads(LlamaLayerBenchmark.KV_HEADS)
                .headDim(LlamaLayerBenchmark.HEAD_DIM)
                .bias(false)
                .rotary(RotaryEmbedding.of(LlamaLayerBenchmark.HEAD_DIM, 500000).llama3Scaling(8, 1, 4, 8192))
                .threads(1)
                .weights(wq, wk, wv, wo)
                .weightPrecision(precision);
        MultiHeadAttention module = builder.build();
        builder = null;
        long after = settledHeapUsed(memory);
        long retained = after - before;

        System.out.printf("module: E=%d, %d heads, %d kv heads of %d, no biases, Llama 3 RoPE%n",
                module.embedDim(), module.numHeads(), module.kvHeads(), module.headDim());
        System.out.printf("weights stored as %s; float32 weight bytes: %,d (%.1f MB)%n", precision, weightBytes, weightBytes / 1e6);
        System.out.printf("heap before:    %,d%n", before);
        System.out.printf("heap after:     %,d%n", after);
        System.out.printf("retained bytes: %,d (%.1f MB)%n", retained, retained / 1e6);
        System.out.printf("ratio:          %.3f (target <= %s)%n", (double) retained / weightBytes,
                precision == Precision.F32 ? "1.1" : "0.55");
        Reference.reachabilityFence(module);
        Reference.reachabilityFence(wq);
        Reference.reachabilityFence(wk);
        Reference.reachabilityFence(wv);
        Reference.reachabilityFence(wo);
    }

    private static float[] random(SplittableRandom random, int n, double bound) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = (float) random.nextDouble(-bound, bound);
        }
        return w;
    }

    /** Heap in use after garbage collections have stopped freeing anything (at most 10 rounds). */
    private static long settledHeapUsed(MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int round = 0; round < 10; round++) {
            System.gc();
            Thread.sleep(100);
            long now = memory.getHeapMemoryUsage().getUsed();
            if (round >= 2 && now >= used - 64 * 1024) {
                return Math.min(now, used);
            }
            used = Math.min(used, now);
        }
        return used;
    }
}
