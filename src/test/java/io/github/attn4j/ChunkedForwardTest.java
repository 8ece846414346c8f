package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Self-attention over a batch of short sequences, which the module runs in chunks of whole batch
 * rows, one thread per chunk, when there are at least two chunks per thread: against the
 * double-precision reference, bit-identical for every thread count (eight threads take the
 * unchunked path on these batches), with and without weights (a call with weights runs over the
 * whole batch: they are one array), with and without RoPE and QK-norm, written in place over the
 * input, and into a tensor whose array a mask also reads.
 */
class ChunkedForwardTest {
    /** (embedDim, numHeads, headDim or 0 for embedDim/numHeads, kvHeads). */
    private static final int[][] CONFIGS = {{48, 4, 0, 4}, {48, 4, 0, 2}, {40, 5, 7, 5}, {32, 8, 0, 8}};
    private static final int[] THREADS = {1, 2, 3, 8};
    private static final float EPS = 1e-6f;

    @Test
    void matchesReferenceAndEveryThreadCount() {
        qt().withExamples(25).forAll(integers().between(1, 100), integers().between(0, RandomMasks.KINDS - 1), longs().all())
                .checkAssert(ChunkedForwardTest::check);
    }

    private static void check(int length, int maskKind, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] c = CONFIGS[random.nextInt(CONFIGS.length)];
        int e = c[0], h = c[1], hd = c[2] == 0 ? e / h : c[2], kvh = c[3];
        // Four to seven chunks of 256 / length rows: chunked on one and two threads.
        int batch = Math.min(256 / length * (4 + random.nextInt(4)), 400);
        boolean bias = random.nextBoolean();
        float bound = (float) (1 / Math.sqrt(e));
        float[] wq = weights(random, h * hd * e, bound), wk = weights(random, kvh * hd * e, bound);
        float[] wv = weights(random, kvh * hd * e, bound), wo = weights(random, e * h * hd, (float) (1 / Math.sqrt(h * hd)));
        float[] bq = bias ? weights(random, h * hd, 0.5f) : null, bk = bias ? weights(random, kvh * hd, 0.5f) : null;
        float[] bv = bias ? weights(random, kvh * hd, 0.5f) : null, bo = bias ? weights(random, e, 0.5f) : null;
        RotaryEmbedding rope = random.nextBoolean() ? MultiHeadAttentionDecoderTest.rope(random, hd) : null;
        float[] qNorm = null, kNorm = null;
        if (random.nextInt(3) == 0) {
            qNorm = MultiHeadAttentionCachedTest.normWeights(random, hd);
            kNorm = MultiHeadAttentionCachedTest.normWeights(random, hd);
        }
        Tensor x = uniform(random, batch, length, e);
        AttentionMask mask = RandomMasks.of(maskKind, random, batch, h, length, length);
        String what = "E=" + e + " H=" + h + " hd=" + hd + " KVH=" + kvh + " bias=" + bias + " B=" + batch + " L=" + length
                + " rope=" + rope + " qkNorm=" + (qNorm != null) + " " + mask;

        float[] expected = null;
        float[] expectedBoth = null;
        float[] expectedWeights = null;
        for (int threads : THREADS) {
            MultiHeadAttentionBuilder builder = MultiHeadAttention.builder(e, h).kvHeads(kvh).bias(bias)
                    .weights(wq, wk, wv, wo).threads(threads);
            if (c[2] != 0) {
                builder.headDim(hd);
            }
            if (bias) {
                builder.biases(bq, bk, bv, bo);
            }
            if (rope != null) {
                builder.rotary(rope);
            }
            if (qNorm != null) {
                builder.qkNorm(qNorm, kNorm, EPS);
            }
            MultiHeadAttention module = builder.build();
            float[] out = module.forward(x, mask).toArray();
            AttentionOutput both = module.forwardWithWeights(x, x, x, mask);
            if (expected == null) {
                ReferenceAttention.Parameters p = new ReferenceAttention.Parameters(e, h, kvh, hd, e, e,
                        (float) (1 / Math.sqrt(hd)), wq, wk, wv, wo, bq, bk, bv, bo);
                AttentionOutput reference = ReferenceAttention.multiHead(x, x, x, mask, p,
                        new ReferenceAttention.DecoderOptions(rope, qNorm, kNorm, EPS, 0f, null));
                // QK-norm and RoPE round each query and key element a few more times.
                int biasTerms = Tolerance.maskBiasTerms(mask, length, length);
                int reduction = e + 2 * hd + length + h * hd + biasTerms;
                Tolerance.assertClose(reference.output().toArray(), out, reduction, what);
                Tolerance.assertClose(reference.output().toArray(), both.output().toArray(), reduction, what + " (with weights)");
                Tolerance.assertClose(reference.weights().toArray(), both.weights().toArray(), e + 2 * hd + biasTerms,
                        what + " weights");
                expected = out;
                expectedBoth = both.output().toArray();
                expectedWeights = both.weights().toArray();
            } else {
                assertArrayEquals(expected, out, 0f, what + ", " + threads + " threads");
                assertArrayEquals(expectedBoth, both.output().toArray(), 0f, what + ", " + threads + " threads (with weights)");
                assertArrayEquals(expectedWeights, both.weights().toArray(), 0f, what + ", " + threads + " threads (weights)");
            }
            Tensor inPlace = Tensor.of(x.toArray(), batch, length, e);
            module.forward(inPlace, mask, inPlace);
            assertArrayEquals(expected, inPlace.toArray(), 0f, what + ", " + threads + " threads, in place");
        }
    }

    /** The output tensor is the array of an additive mask that every chunk reads: no chunk may write it early. */
    @Test
    void outputOverTheMaskArray() {
        int batch = 16, length = 128, e = 8;
        SplittableRandom random = new SplittableRandom(5);
        float[] shared = new float[batch * length * e];
        for (int i = 0; i < shared.length; i++) {
            shared[i] = (float) random.nextDouble(-2, 2);
        }
        Tensor x = uniform(random, batch, length, e);
        MultiHeadAttention module = MultiHeadAttention.builder(e, 2).seed(3).threads(1).build();
        float[] expected = module.forward(x, AttentionMask.additive(Tensor.of(shared.clone(), 1, 1, length, length))).toArray();
        Tensor out = Tensor.of(shared, batch, length, e);
        module.forward(x, AttentionMask.additive(Tensor.of(shared, 1, 1, length, length)), out);
        assertArrayEquals(expected, out.toArray(), 0f);
    }

    private static float[] weights(SplittableRandom random, int n, float bound) {
        float[] w = new float[n];
        for (int i = 0; i < n; i++) {
            w[i] = (float) random.nextDouble(-bound, bound);
        }
        return w;
    }
}
