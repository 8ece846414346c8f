package io.github.attn4j;

import java.util.SplittableRandom;

/**
 * Seeded uniform random test data, the one copy every test package uses. Depends on nothing but
 * attn4j, so that child JVMs (FallbackProbe) can use it too.
 *
 * <p>Every value is {@code (float) random.nextDouble(-bound, bound)}, one draw per element in
 * order, so a seed always gives the same numbers whichever helper produced them.
 */
public final class RandomTensors {
    private RandomTensors() {
    }

    /** One value uniform in [-1, 1). */
    public static float uniformValue(SplittableRandom random) {
        return (float) random.nextDouble(-1, 1);
    }

    /** {@code n} values uniform in [-bound, bound). */
    public static float[] uniformArray(SplittableRandom random, int n, double bound) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) random.nextDouble(-bound, bound);
        }
        return a;
    }

    /** {@code n} values uniform in [-1, 1). */
    public static float[] uniformArray(SplittableRandom random, int n) {
        return uniformArray(random, n, 1);
    }

    /** A tensor of the given shape with values uniform in [-1, 1). */
    public static Tensor uniform(SplittableRandom random, int... shape) {
        int n = 1;
        for (int s : shape) {
            n *= s;
        }
        return Tensor.of(uniformArray(random, n), shape);
    }
}
