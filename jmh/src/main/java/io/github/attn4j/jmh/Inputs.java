package io.github.attn4j.jmh;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.Tensor;

import java.util.Arrays;
import java.util.SplittableRandom;

/** Benchmark inputs: seeded uniform tensors and masks by name. */
final class Inputs {
    private Inputs() {
    }

    static Tensor uniform(SplittableRandom random, int... shape) {
        int n = 1;
        for (int d : shape) {
            n *= d;
        }
        float[] data = new float[n];
        for (int i = 0; i < n; i++) {
            data[i] = (float) random.nextDouble(-1, 1);
        }
        return Tensor.of(data, shape);
    }

    /** {@code none}, {@code causal}, or {@code padding} (the last quarter of every row's keys is padding). */
    static AttentionMask mask(String name, int batch, int keys) {
        return switch (name) {
            case "none" -> AttentionMask.none();
            case "causal" -> AttentionMask.causal();
            case "padding" -> AttentionMask.keyPadding(paddedKeys(batch, keys));
            default -> throw new IllegalArgumentException("mask: expected none, causal or padding, got " + name);
        };
    }

    /** The padding of the {@code padding} mask: {@code [batch][keys]}, true for the last quarter of every row. */
    static boolean[][] paddedKeys(int batch, int keys) {
        boolean[][] padded = new boolean[batch][keys];
        for (boolean[] row : padded) {
            Arrays.fill(row, keys - keys / 4, keys, true);
        }
        return padded;
    }
}
