package io.github.attn4j;

import java.util.SplittableRandom;

/** Random masks of every kind, and of every broadcast shape, for property tests. */
final class RandomMasks {
    static final int KINDS = 11;

    private RandomMasks() {
    }

    /**
     * A mask of kind {@code kind % KINDS} for scores (batch, heads, lq, lk): none, the two causal
     * alignments, key padding, keep and additive tensors of rank 2 and 4, a sliding window (half the
     * time with causal), ALiBi with the paper's slopes; kind 10 joins two or three random masks.
     */
    static AttentionMask of(int kind, SplittableRandom random, int batch, int heads, int lq, int lk) {
        return switch (kind % KINDS) {
            case 0 -> AttentionMask.none();
            case 1 -> AttentionMask.causal();
            case 2 -> AttentionMask.causalTopLeft();
            case 3 -> AttentionMask.keyPadding(padding(random, batch, lk));
            case 4 -> AttentionMask.keep(rank2(random, lq, lk, true));
            case 5 -> AttentionMask.keep(rank4(random, batch, heads, lq, lk, true));
            case 6 -> AttentionMask.additive(rank2(random, lq, lk, false));
            case 7 -> AttentionMask.additive(rank4(random, batch, heads, lq, lk, false));
            case 8 -> {
                AttentionMask window = AttentionMask.slidingWindow(1 + random.nextInt(Math.max(lq, lk) + 1));
                yield random.nextBoolean() ? AttentionMask.causal().and(window) : window;
            }
            case 9 -> AttentionMask.alibi(AttentionMask.alibiSlopes(heads));
            default -> {
                AttentionMask m = of(random.nextInt(KINDS - 1), random, batch, heads, lq, lk);
                int more = 1 + random.nextInt(2);
                for (int i = 0; i < more; i++) {
                    m = m.and(of(random.nextInt(KINDS - 1), random, batch, heads, lq, lk));
                }
                yield m;
            }
        };
    }

    /** Each key padded with probability 1/4; one batch row in eight is padded entirely. */
    private static boolean[][] padding(SplittableRandom random, int batch, int lk) {
        boolean[][] p = new boolean[batch][lk];
        for (boolean[] row : p) {
            boolean all = random.nextInt(8) == 0;
            for (int j = 0; j < lk; j++) {
                row[j] = all || random.nextInt(4) == 0;
            }
        }
        return p;
    }

    private static Tensor rank2(SplittableRandom random, int lq, int lk, boolean keep) {
        int rows = random.nextBoolean() ? lq : 1;
        return Tensor.of(values(random, rows * lk, keep), rows, lk);
    }

    private static Tensor rank4(SplittableRandom random, int batch, int heads, int lq, int lk, boolean keep) {
        int b = random.nextBoolean() ? batch : 1, h = random.nextBoolean() ? heads : 1, q = random.nextBoolean() ? lq : 1;
        return Tensor.of(values(random, b * h * q * lk, keep), b, h, q, lk);
    }

    /** Keep flags (0 with probability 1/5, else 1 or another nonzero) or biases (some -Infinity, else in [-3, 3]). */
    private static float[] values(SplittableRandom random, int n, boolean keep) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            if (keep) {
                v[i] = random.nextInt(5) == 0 ? 0f : (random.nextBoolean() ? 1f : -2.5f);
            } else {
                v[i] = random.nextInt(6) == 0 ? Float.NEGATIVE_INFINITY : (float) random.nextDouble(-3, 3);
            }
        }
        return v;
    }
}
