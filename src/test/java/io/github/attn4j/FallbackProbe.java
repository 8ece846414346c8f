package io.github.attn4j;

import io.github.attn4j.internal.kernel.Kernels;

import java.util.SplittableRandom;

/**
 * The program {@link FallbackJvmTest} runs in a child JVM: a multi-head attention forward pass
 * on fixed random inputs, printed so that the parent can check it. Line 1 is the kernel path
 * ({@link Kernels#describe()}); then one output element per line, in {@link Float#toString}
 * form, which reads back to the same float.
 */
public final class FallbackProbe {
    static final int E = 48;
    static final int HEADS = 4;
    static final int KV_HEADS = 2;
    static final int BATCH = 2;
    static final int LENGTH = 37;

    private FallbackProbe() {
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder(Kernels.describe()).append('\n');
        for (float f : compute(Long.parseLong(args[0])).toArray()) {
            out.append(f).append('\n');
        }
        System.out.print(out);
    }

    /** Weights wq, wk, wv, wo and biases bq, bk, bv, bo of the probe's module, from {@code seed}. */
    static float[][] parameters(long seed) {
        SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
        int hd = E / HEADS;
        int[] sizes = {E * E, KV_HEADS * hd * E, KV_HEADS * hd * E, E * E, E, KV_HEADS * hd, KV_HEADS * hd, E};
        float[][] p = new float[sizes.length][];
        for (int i = 0; i < sizes.length; i++) {
            p[i] = RandomTensors.uniform(random, sizes[i]).toArray();
        }
        return p;
    }

    /** The module of the probe, built from {@code seed}. */
    static MultiHeadAttention module(long seed) {
        float[][] p = parameters(seed);
        return MultiHeadAttention.builder(E, HEADS).kvHeads(KV_HEADS).weights(p[0], p[1], p[2], p[3])
                .biases(p[4], p[5], p[6], p[7]).threads(2).build();
    }

    /** The input of the probe, from {@code seed}. */
    static Tensor input(long seed) {
        return RandomTensors.uniform(new SplittableRandom(seed), BATCH, LENGTH, E);
    }

    /** Causal self-attention of {@link #input} through {@link #module}. */
    static Tensor compute(long seed) {
        return module(seed).forward(input(seed), AttentionMask.causal());
    }
}
