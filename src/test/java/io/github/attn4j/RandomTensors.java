package io.github.attn4j;

import java.util.SplittableRandom;

/** Random test tensors; depends on nothing but attn4j, so that child JVMs can use it too. */
final class RandomTensors {
    private RandomTensors() {
    }

    /** A tensor of the given shape with values uniform in [-1, 1). */
    static Tensor uniform(SplittableRandom random, int... shape) {
        int n = 1;
        for (int s : shape) {
            n *= s;
        }
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) random.nextDouble(-1, 1);
        }
        return Tensor.of(a, shape);
    }
}
