package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * The public entry points on random arguments, valid or not: every call either returns a result
 * of the shape its arguments imply or throws an {@link IllegalArgumentException} (or a
 * {@link NullPointerException}) with a message, never another exception (an index out of
 * bounds, a division by zero, a negative array size). Shapes are small and may be empty or
 * mismatched; counts may be negative or zero. A fuzzer of this kind found that zero query heads
 * over key/value heads divided by zero.
 */
class ArgumentFuzzTest {
    /** Mostly small positive, sometimes 0, -1 or larger than any shape here. */
    private static int count(SplittableRandom r) {
        return switch (r.nextInt(10)) {
            case 0 -> -1;
            case 1 -> 0;
            case 2 -> 9;
            default -> r.nextInt(1, 5);
        };
    }

    private static Tensor tensor(SplittableRandom r, int... shape) {
        return RandomTensors.uniform(r, shape);
    }

    /** A random rank-2 to rank-4 tensor whose dims may be 0. */
    private static Tensor anyTensor(SplittableRandom r) {
        int[] shape = new int[r.nextInt(2, 5)];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = r.nextInt(0, 4);
        }
        return tensor(r, shape);
    }

    /** A random mask for these sizes, or one whose sizes do not fit; no mask when building it was rejected. */
    private static AttentionMask mask(SplittableRandom r, int batch, int heads, int queries, int keys) {
        AttentionMask[] built = {AttentionMask.none()};
        call("mask", () -> {
            built[0] = anyMask(r, batch, heads, queries, keys);
            return null;
        }, null);
        return built[0];
    }

    private static AttentionMask anyMask(SplittableRandom r, int batch, int heads, int queries, int keys) {
        return switch (r.nextInt(7)) {
            case 0 -> AttentionMask.causal();
            case 1 -> AttentionMask.slidingWindow(r.nextInt(1, 4)).and(AttentionMask.causal());
            case 2 -> {
                boolean[][] padded = new boolean[r.nextBoolean() ? batch : batch + 1][];
                for (int b = 0; b < padded.length; b++) {
                    padded[b] = new boolean[r.nextBoolean() ? keys : keys + 1];
                    for (int j = 0; j < padded[b].length; j++) {
                        padded[b][j] = r.nextBoolean();
                    }
                }
                yield AttentionMask.keyPadding(padded);
            }
            case 3 -> AttentionMask.additive(tensor(r, r.nextBoolean() ? queries : queries + 1, keys));
            case 4 -> AttentionMask.alibi(AttentionMask.alibiSlopes(r.nextBoolean() ? Math.max(heads, 1) : heads + 1));
            case 5 -> AttentionMask.causalTopLeft();
            default -> AttentionMask.none();
        };
    }

    /** Runs the call: it returns (checked by {@code expectShape} when not null) or throws IAE or NPE with a message. */
    private static void call(String what, Supplier<Tensor> body, int[] expectShape) {
        Tensor result;
        try {
            result = body.get();
        } catch (IllegalArgumentException | NullPointerException e) {
            assertNotNull(e.getMessage(), what + ": " + e + " has no message");
            assertFalse(e.getMessage().isBlank(), what + ": " + e + " has a blank message");
            return;
        } catch (RuntimeException e) {
            throw new AssertionError(what + " threw " + e, e);
        }
        if (expectShape != null) {
            assertArrayEquals(expectShape, result.shape(), what + ": result shape");
        }
    }

    @Test
    void scaledDotProductAttentionReturnsOrRejects() {
        qt().withExamples(400).forAll(longs().all()).checkAssert(seed -> {
            SplittableRandom r = new SplittableRandom(seed);
            int b = r.nextInt(0, 3), h = r.nextInt(0, 4), lq = r.nextInt(0, 4), lk = r.nextInt(0, 4), d = 4 * r.nextInt(1, 3);
            int kvh = r.nextInt(4) == 0 ? r.nextInt(0, 4) : Math.max(h, 1) / (r.nextBoolean() ? 1 : Math.max(h, 1));
            int dv = r.nextBoolean() ? d : 4;
            Tensor q = tensor(r, b, h, lq, d);
            Tensor k = tensor(r, b, kvh, lk, r.nextInt(5) == 0 ? d + 1 : d);
            Tensor v = tensor(r, b, kvh, r.nextInt(5) == 0 ? lk + 1 : lk, dv);
            AttentionMask m = mask(r, b, h, lq, lk);
            int threads = r.nextInt(1, 3);
            String shapes = "q " + java.util.Arrays.toString(q.shape()) + " k " + java.util.Arrays.toString(k.shape())
                    + " v " + java.util.Arrays.toString(v.shape()) + " " + m + " threads " + threads;
            ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(threads).build();
            call("attend " + shapes, () -> sdpa.attend(q, k, v, m), new int[]{b, h, lq, dv});
            call("attendWithWeights " + shapes, () -> sdpa.attendWithWeights(q, k, v, m).output(), new int[]{b, h, lq, dv});
            call("attend(out) " + shapes, () -> sdpa.attend(q, k, v, m, anyTensor(r)), null);
            call("apply on any tensors", () -> ScaledDotProductAttention.apply(anyTensor(r), anyTensor(r), anyTensor(r), m), null);
            call("attend(cache) " + shapes, () -> {
                KvCache cache = KvCache.create(b, Math.max(kvh, 1), d, r.nextInt(0, 3), Precision.values()[r.nextInt(4)]);
                int[] tokens = new int[r.nextBoolean() ? b : b + 1];
                for (int i = 0; i < tokens.length; i++) {
                    tokens[i] = r.nextInt(-1, lk + 2);
                }
                cache.append(tensor(r, b, Math.max(kvh, 1), lk, d), tensor(r, b, Math.max(kvh, 1), lk, d),
                        r.nextBoolean() ? null : tokens);
                return sdpa.attend(q, cache, m);
            }, new int[]{b, h, lq, d});
        });
    }

    @Test
    void cachesAndModulesReturnOrReject() {
        qt().withExamples(200).forAll(longs().all()).checkAssert(seed -> {
            SplittableRandom r = new SplittableRandom(seed);
            int b = r.nextInt(0, 3), l = r.nextInt(0, 4), e = 8 * r.nextInt(1, 3);
            Precision precision = Precision.values()[r.nextInt(4)];
            call("cache edits", () -> {
                KvCache cache = KvCache.create(count(r), count(r), count(r), count(r), precision);
                cache.append(anyTensor(r), anyTensor(r));
                cache.truncate(count(r), count(r));
                cache.truncate(count(r));
                cache.reset(count(r));
                cache.length(count(r));
                return null;
            }, null);
            call("module", () -> MultiHeadAttention.builder(r.nextBoolean() ? e : count(r), r.nextBoolean() ? 2 : count(r))
                    .kvHeads(r.nextBoolean() ? 1 : count(r)).seed(seed).build()
                    .forward(tensor(r, b, l, r.nextInt(4) == 0 ? e + 1 : e), mask(r, b, 2, l, l)), null);
            MultiHeadAttention module = MultiHeadAttention.builder(e, 2).kvHeads(1).seed(seed).build();
            call("forward", () -> module.forward(tensor(r, b, l, e), mask(r, b, 2, l, l)), new int[]{b, l, e});
            call("forward(q, k, v)", () -> module.forward(tensor(r, b, l, e), tensor(r, b, l + r.nextInt(0, 2), e),
                    tensor(r, b, l, r.nextBoolean() ? e : e + 1), mask(r, b, 2, l, l)), new int[]{b, l, e});
            call("forwardCached", () -> {
                KvCache cache = r.nextBoolean() ? module.newKvCache(b, count(r), precision)
                        : KvCache.create(b, r.nextInt(1, 3), r.nextInt(1, 9), 2, precision);
                int[] tokens = new int[r.nextBoolean() ? b : b + 1];
                for (int i = 0; i < tokens.length; i++) {
                    tokens[i] = r.nextInt(-1, l + 2);
                }
                module.forwardCached(tensor(r, b, l, e), cache, mask(r, b, 2, l, cache.length() + l),
                        r.nextBoolean() ? null : tokens);
                return module.forwardCached(tensor(r, b, 1, e), cache);
            }, new int[]{b, 1, e});
            call("embedding", () -> Embedding.of(new float[12], count(r), count(r))
                    .lookup(new int[][]{{count(r), count(r)}, {count(r)}}), null);
            call("tensor", () -> {
                Tensor x = Tensor.of(new float[r.nextInt(0, 9)], count(r), count(r));
                x.get(count(r), count(r));
                x.dim(count(r));
                return x.reshape(count(r), count(r));
            }, null);
        });
    }

    /** {@code n} values, or none when {@code n} is negative (an array of the wrong length). */
    private static float[] values(SplittableRandom r, int n) {
        return RandomTensors.uniformArray(r, Math.max(n, 0));
    }

    /** {@code right} most of the time, otherwise a wrong count. */
    private static int sometimes(SplittableRandom r, int right) {
        return r.nextInt(3) == 0 ? count(r) : right;
    }

    @Test
    void builderOptionsAndWeightImportsReturnOrReject() {
        qt().withExamples(200).forAll(longs().all()).checkAssert(seed -> {
            SplittableRandom r = new SplittableRandom(seed);
            int e = 8 * r.nextInt(1, 3), h = r.nextBoolean() ? 2 : 1, b = r.nextInt(0, 3), l = r.nextInt(0, 4);
            int[] shape = {b, l, e};
            call("pytorchWeights", () -> MultiHeadAttention.builder(e, h)
                    .pytorchWeights(values(r, sometimes(r, 3 * e * e)), r.nextBoolean() ? null : values(r, sometimes(r, 3 * e)),
                            values(r, sometimes(r, e * e)), r.nextBoolean() ? null : values(r, sometimes(r, e)))
                    .build().forward(tensor(r, b, l, e), AttentionMask.causal()), shape);
            call("interleavedQkvWeights", () -> MultiHeadAttention.builder(e, h).kvHeads(r.nextBoolean() ? h : 1)
                    .interleavedQkvWeights(values(r, sometimes(r, 3 * e * e)), null, values(r, sometimes(r, e * e)), null)
                    .build().forward(tensor(r, b, l, e), AttentionMask.none()), shape);
            call("weights from segments", () -> {
                Precision format = Precision.values()[r.nextInt(4)];
                int bytes = format == Precision.F32 ? 4 : 2;
                MemorySegment[] w = new MemorySegment[4];
                for (int i = 0; i < 4; i++) {
                    w[i] = Arena.ofAuto().allocate(Math.max(0, sometimes(r, e * e)) * (long) bytes);
                }
                return MultiHeadAttention.builder(e, h).weights(format, w[0], w[1], w[2], w[3]).build()
                        .forward(tensor(r, b, l, e), AttentionMask.none());
            }, shape);
            call("options", () -> MultiHeadAttention.builder(e, h)
                    .weightPrecision(Precision.values()[r.nextInt(4)])
                    .sinks(r.nextBoolean() ? null : values(r, sometimes(r, h)))
                    .softcap(r.nextInt(3) == 0 ? -1f : r.nextInt(3))
                    .scale(r.nextInt(3) == 0 ? Float.NaN : 0.5f)
                    .rotary(r.nextBoolean() ? null : RotaryEmbedding.of(sometimes(r, e / h), r.nextBoolean() ? 10000 : -1))
                    .qkNorm(values(r, sometimes(r, e / h)), values(r, sometimes(r, e / h)), r.nextBoolean() ? 1e-6f : -1f)
                    .seed(seed).build().forward(tensor(r, b, l, e), AttentionMask.causal()), shape);
            call("rotary apply", () -> {
                int[][] positions = new int[Math.max(0, sometimes(r, b))][];
                for (int i = 0; i < positions.length; i++) {
                    positions[i] = new int[Math.max(0, sometimes(r, l))];
                    for (int t = 0; t < positions[i].length; t++) {
                        positions[i][t] = r.nextInt(-1, 9);
                    }
                }
                return RotaryEmbedding.of(sometimes(r, 4), 10000).apply(tensor(r, b, h, l, 4), r.nextBoolean() ? null : positions);
            }, new int[]{b, h, l, 4});
        });
    }
}
