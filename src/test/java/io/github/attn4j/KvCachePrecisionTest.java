package io.github.attn4j;

import io.github.attn4j.reference.ReferenceAttention;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Caches in F16, BF16 and INT8 hold what {@link StoredValues} says: attention over an F16 or BF16
 * cache gives the same bits as over an F32 cache holding the rounded values (same kernel, same
 * tiles); over an INT8 cache, whose products apply each block's scale once
 * ({@code DecodeOps.int8Keys}, {@code int8Values}), it agrees with the double-precision reference
 * over the stored values within float rounding. Results do not depend on the chunks and ragged
 * row counts of the appends or the thread count, with NaN and infinities among the inputs. Inputs
 * F16 or BF16 cannot hold are rejected and change nothing.
 */
class KvCachePrecisionTest {
    private static final Precision[] NARROW = {Precision.F16, Precision.BF16, Precision.INT8};
    private static final Precision[] HALF = {Precision.F16, Precision.BF16};
    private static final int[] WIDTHS = {8, 16, 40, 64, 128};

    /** A random cache and query shape: 1 or 2 rows, up to {@code maxKvHeads} key/value heads, 1 to 3 query heads each, 1 to 4 queries. */
    private record Shape(int batch, int kvHeads, int heads, int d, int t) {
        static Shape draw(SplittableRandom random, int length, int maxKvHeads) {
            int batch = 1 + random.nextInt(2), kvHeads = 1 + random.nextInt(maxKvHeads);
            return new Shape(batch, kvHeads, kvHeads * (1 + random.nextInt(3)), WIDTHS[random.nextInt(WIDTHS.length)],
                    Math.min(length, 1 + random.nextInt(4)));
        }
    }

    /** Uniform values in [-range, range), now and then NaN or an infinity when {@code special}. */
    private static float[] values(SplittableRandom random, int n, double range, boolean special) {
        float[] x = RandomTensors.uniformArray(random, n, range);
        if (special && random.nextInt(3) == 0) {
            float[] odd = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
            for (int i = 0; i < 1 + random.nextInt(3); i++) {
                x[random.nextInt(n)] = odd[random.nextInt(3)];
            }
        }
        return x;
    }

    private static AttentionMask mask(SplittableRandom random, int heads) {
        return switch (random.nextInt(3)) {
            case 0 -> AttentionMask.none();
            case 1 -> AttentionMask.slidingWindow(1 + random.nextInt(100));
            default -> AttentionMask.alibi(AttentionMask.alibiSlopes(heads));
        };
    }

    @Test
    void halfCachesAttendLikeAnF32CacheHoldingTheRoundedValues() {
        qt().withExamples(40).forAll(integers().between(1, 600), integers().between(0, HALF.length - 1), longs().all())
                .checkAssert((length, p, seed) -> {
                    Precision precision = HALF[p];
                    SplittableRandom random = new SplittableRandom(seed);
                    Shape shape = Shape.draw(random, length, 3);
                    int batch = shape.batch(), kvHeads = shape.kvHeads(), heads = shape.heads(), d = shape.d(), t = shape.t();
                    // Ranges that F16 holds; BF16 also gets large ones.
                    double range = precision == Precision.F16 ? 3 : Math.pow(10, random.nextInt(-3, 6));
                    float[] k = values(random, batch * kvHeads * length * d, range, true);
                    float[] v = values(random, batch * kvHeads * length * d, range, true);
                    KvCache narrow = KvCache.create(batch, kvHeads, d, random.nextInt(40), precision);
                    KvCache wide = KvCache.create(batch, kvHeads, d, random.nextInt(40));
                    narrow.append(Tensor.of(k, batch, kvHeads, length, d), Tensor.of(v, batch, kvHeads, length, d));
                    wide.append(Tensor.of(StoredValues.of(precision, k, d), batch, kvHeads, length, d),
                            Tensor.of(StoredValues.of(precision, v, d), batch, kvHeads, length, d));
                    Tensor q = RandomTensors.uniform(random, batch, heads, t, d);
                    AttentionMask mask = mask(random, heads);
                    ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(1 + random.nextInt(2)).build();
                    assertArrayEquals(sdpa.attend(q, wide, mask).toArray(), sdpa.attend(q, narrow, mask).toArray(),
                            precision + " B=" + batch + " KVH=" + kvHeads + " H=" + heads + " d=" + d + " L=" + length);
                });
    }

    /**
     * INT8 against {@link ReferenceAttention} over {@link StoredValues}' values {@code q · s} (in
     * double), finite inputs: output within {@link Tolerance}'s bound for reductions over d depths
     * and L keys. Applying a block's scale to its partial sum or to the weight, rather than to each
     * element, moves a product by a rounding of its own size, so the float32 bound holds as it
     * does for an F32 cache.
     */
    @Test
    void int8CacheAttendsLikeTheReferenceOverItsStoredValues() {
        qt().withExamples(40).forAll(integers().between(1, 600), longs().all())
                .checkAssert((length, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    Shape shape = Shape.draw(random, length, 3);
                    int batch = shape.batch(), kvHeads = shape.kvHeads(), heads = shape.heads(), d = shape.d(), t = shape.t();
                    float[] k = values(random, batch * kvHeads * length * d, 1, false);
                    float[] v = values(random, batch * kvHeads * length * d, 1, false);
                    KvCache cache = KvCache.create(batch, kvHeads, d, random.nextInt(40), Precision.INT8);
                    cache.append(Tensor.of(k, batch, kvHeads, length, d), Tensor.of(v, batch, kvHeads, length, d));
                    Tensor q = RandomTensors.uniform(random, batch, heads, t, d);
                    AttentionMask mask = mask(random, heads);
                    float[] out = ScaledDotProductAttention.builder().threads(1 + random.nextInt(2)).build().attend(q, cache, mask).toArray();
                    // The cache's queries are its last t tokens, causal.
                    float[] ref = ReferenceAttention.scaledDotProduct(q,
                            Tensor.of(StoredValues.of(Precision.INT8, k, d), batch, kvHeads, length, d),
                            Tensor.of(StoredValues.of(Precision.INT8, v, d), batch, kvHeads, length, d),
                            AttentionMask.causal().and(mask), (float) (1 / Math.sqrt(d))).output().toArray();
                    Tolerance.assertClose(ref, out, d + length + Tolerance.maskBiasTerms(mask, t, length),
                            "INT8 B=" + batch + " KVH=" + kvHeads + " H=" + heads + " d=" + d + " L=" + length + " " + mask);
                });
    }

    /**
     * NaN and infinities in an INT8 cache reach exactly the outputs the README says: output
     * {@code (b, h, i, c)} is NaN iff a key that query i attends (causal, within the window) is
     * stored as NaN somewhere, or its value is stored as NaN in column c (a whole block of 32
     * values is, when one of them is not finite). Scores here stay far from underflow, so every
     * attended key has a nonzero weight.
     */
    @Test
    void int8CacheConfinesNaNToTheOutputsThatAttendIt() {
        qt().withExamples(60).forAll(integers().between(1, 300), longs().all())
                .checkAssert((length, seed) -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    Shape shape = Shape.draw(random, length, 2);
                    int batch = shape.batch(), kvHeads = shape.kvHeads(), heads = shape.heads(), d = shape.d(), t = shape.t();
                    float[] k = values(random, batch * kvHeads * length * d, 1, true);
                    float[] v = values(random, batch * kvHeads * length * d, 1, true);
                    KvCache cache = KvCache.create(batch, kvHeads, d, 0, Precision.INT8);
                    cache.append(Tensor.of(k, batch, kvHeads, length, d), Tensor.of(v, batch, kvHeads, length, d));
                    Tensor q = RandomTensors.uniform(random, batch, heads, t, d);
                    int window = random.nextBoolean() ? length : 1 + random.nextInt(length);
                    AttentionMask mask = window == length ? AttentionMask.none() : AttentionMask.slidingWindow(window);
                    float[] out = ScaledDotProductAttention.builder().threads(1 + random.nextInt(2)).build().attend(q, cache, mask).toArray();
                    float[] sk = StoredValues.of(Precision.INT8, k, d), sv = StoredValues.of(Precision.INT8, v, d);
                    for (int b = 0; b < batch; b++) {
                        for (int h = 0; h < heads; h++) {
                            int g = h / (heads / kvHeads);
                            for (int i = 0; i < t; i++) {
                                int pos = length - t + i;
                                for (int c = 0; c < d; c++) {
                                    boolean nan = false;
                                    for (int j = Math.max(0, pos - window + 1); j <= pos; j++) {
                                        int row = ((b * kvHeads + g) * length + j) * d;
                                        for (int x = 0; x < d; x++) {
                                            nan |= Float.isNaN(sk[row + x]);
                                        }
                                        nan |= Float.isNaN(sv[row + c]);
                                    }
                                    float o = out[((b * heads + h) * t + i) * d + c];
                                    assertEquals(nan, Float.isNaN(o), "b=" + b + " h=" + h + " i=" + i + " c=" + c + " window=" + window);
                                }
                            }
                        }
                    }
                });
    }

    /**
     * The newest token's query gives the same bits alone (a decode step's tile, the step
     * products) as in the last row of a call over the newest t tokens (a tile of more than eight
     * rows per key/value head: the micro-kernel for F32, F16 and BF16; for INT8 scores the step
     * products again), for every precision. Key lengths stay under one split of 2048 keys.
     */
    @Test
    void aQueryRowGetsTheSameBitsAloneOrAmongManyRows() {
        qt().withExamples(40).forAll(integers().between(20, 600), integers().between(0, 3), longs().all())
                .checkAssert((length, p, seed) -> {
                    Precision precision = Precision.values()[p];
                    SplittableRandom random = new SplittableRandom(seed);
                    int kvHeads = 1 + random.nextInt(2), heads = kvHeads * (1 + random.nextInt(3));
                    int d = WIDTHS[random.nextInt(WIDTHS.length)];
                    int t = 9 + random.nextInt(12);
                    float[] k = values(random, kvHeads * length * d, 1, false);
                    float[] v = values(random, kvHeads * length * d, 1, false);
                    KvCache cache = KvCache.create(1, kvHeads, d, 0, precision);
                    cache.append(Tensor.of(k, 1, kvHeads, length, d), Tensor.of(v, 1, kvHeads, length, d));
                    float[] q = RandomTensors.uniformArray(random, heads * t * d, 1);
                    float[] last = new float[heads * d];
                    for (int h = 0; h < heads; h++) {
                        System.arraycopy(q, (h * t + t - 1) * d, last, h * d, d);
                    }
                    ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(1 + random.nextInt(2)).build();
                    float[] many = sdpa.attend(Tensor.of(q, 1, heads, t, d), cache, AttentionMask.none()).toArray();
                    float[] alone = sdpa.attend(Tensor.of(last, 1, heads, 1, d), cache, AttentionMask.none()).toArray();
                    for (int h = 0; h < heads; h++) {
                        for (int c = 0; c < d; c++) {
                            assertEquals(Float.floatToIntBits(alone[h * d + c]), Float.floatToIntBits(many[(h * t + t - 1) * d + c]),
                                    precision + " h=" + h + " c=" + c + " d=" + d + " L=" + length + " t=" + t);
                        }
                    }
                });
    }

    @Test
    void chunkedAndRaggedAppendsEqualOneAppendOnAnyThreadCount() {
        qt().withExamples(40).forAll(integers().between(1, 200), integers().between(0, NARROW.length - 1), longs().all())
                .checkAssert((longest, p, seed) -> {
                    Precision precision = NARROW[p];
                    SplittableRandom random = new SplittableRandom(seed);
                    int batch = 1 + random.nextInt(3), kvHeads = 1 + random.nextInt(2), heads = 2 * kvHeads;
                    int d = WIDTHS[random.nextInt(WIDTHS.length)];
                    int[] lengths = new int[batch];
                    for (int b = 0; b < batch; b++) {
                        lengths[b] = 1 + random.nextInt(longest);
                    }
                    float[] k = values(random, batch * kvHeads * longest * d, 2, true);
                    float[] v = values(random, batch * kvHeads * longest * d, 2, true);
                    KvCache once = KvCache.create(batch, kvHeads, d, 0, precision);
                    once.append(Tensor.of(k, batch, kvHeads, longest, d), Tensor.of(v, batch, kvHeads, longest, d), lengths);

                    KvCache chunked = KvCache.create(batch, kvHeads, d, random.nextInt(3), precision);
                    int[] done = new int[batch];
                    while (!java.util.Arrays.equals(done, lengths)) {
                        int t = 1 + random.nextInt(random.nextBoolean() ? 3 : 50);
                        int[] counts = new int[batch];
                        float[] kc = values(random, batch * kvHeads * t * d, 1, false);   // past counts[b]: never read
                        float[] vc = values(random, batch * kvHeads * t * d, 1, false);
                        for (int b = 0; b < batch; b++) {
                            counts[b] = Math.min(lengths[b] - done[b], random.nextInt(t + 1));
                            for (int g = 0; g < kvHeads; g++) {
                                int from = ((b * kvHeads + g) * longest + done[b]) * d;
                                System.arraycopy(k, from, kc, (b * kvHeads + g) * t * d, counts[b] * d);
                                System.arraycopy(v, from, vc, (b * kvHeads + g) * t * d, counts[b] * d);
                            }
                            done[b] += counts[b];
                        }
                        chunked.append(Tensor.of(kc, batch, kvHeads, t, d), Tensor.of(vc, batch, kvHeads, t, d), counts);
                    }
                    for (int b = 0; b < batch; b++) {
                        assertEquals(lengths[b], chunked.length(b));
                    }
                    Tensor q = RandomTensors.uniform(random, batch, heads, 1, d);
                    AttentionMask mask = mask(random, heads);
                    float[] expected = ScaledDotProductAttention.builder().threads(1).build().attend(q, once, mask).toArray();
                    for (int threads = 1; threads <= 3; threads++) {
                        ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(threads).build();
                        assertArrayEquals(expected, sdpa.attend(q, chunked, mask).toArray(), precision + " chunked, threads=" + threads);
                        assertArrayEquals(expected, sdpa.attend(q, once, mask).toArray(), precision + " once, threads=" + threads);
                    }
                    // Rolling a row back and appending the same tokens again gives the same cache.
                    int row = random.nextInt(batch);
                    int cut = random.nextInt(lengths[row] + 1);
                    chunked.truncate(row, cut);
                    int[] counts = new int[batch];
                    counts[row] = lengths[row] - cut;
                    float[] kr = new float[batch * kvHeads * longest * d], vr = new float[kr.length];
                    for (int g = 0; g < kvHeads; g++) {
                        int from = ((row * kvHeads + g) * longest + cut) * d;
                        System.arraycopy(k, from, kr, (row * kvHeads + g) * longest * d, counts[row] * d);
                        System.arraycopy(v, from, vr, (row * kvHeads + g) * longest * d, counts[row] * d);
                    }
                    chunked.append(Tensor.of(kr, batch, kvHeads, longest, d), Tensor.of(vr, batch, kvHeads, longest, d), counts);
                    assertArrayEquals(expected, ScaledDotProductAttention.builder().threads(2).build().attend(q, chunked, mask).toArray(),
                            precision + " after truncate(" + row + ", " + cut + ") and append");
                });
    }

    @Test
    void narrowCachesTakeAFractionOfTheMemory() {
        int kvHeads = 8, d = 128;
        for (int tokens : new int[]{1, 100, 4096}) {
            long f32 = KvCache.create(1, kvHeads, d, tokens).storageBytes();
            // Every key and value as a float, at least.
            assertTrue(f32 >= 2L * kvHeads * tokens * d * 4, "F32 " + f32);
            for (Precision p : NARROW) {
                KvCache cache = KvCache.create(1, kvHeads, d, tokens, p);
                cache.append(Tensor.zeros(1, kvHeads, tokens, d), Tensor.zeros(1, kvHeads, tokens, d));
                double ratio = (double) cache.storageBytes() / f32;
                assertTrue(ratio <= (p == Precision.INT8 ? 0.3 : 0.52), p + " at " + tokens + " tokens: " + ratio + " of F32");
                // No larger than the keys and values themselves plus INT8's scales (4 bytes per 32 values) and a flag
                // per tile, keys rounded up to whole panels (at most 32 keys), values to whole chunks of a key tile
                // (at most 256 keys).
                double perValue = p == Precision.INT8 ? 1 + 4.0 / 32 : 2;
                double stored = kvHeads * (Math.ceil(tokens / 32.0) * 32 + Math.ceil(tokens / 256.0) * 256) * d * perValue;
                assertTrue(cache.storageBytes() <= stored + 2 * kvHeads * (tokens + 256), p + " " + cache.storageBytes());
            }
        }
    }

    @Test
    void valuesF16OrBf16CannotHoldAreRejectedAndChangeNothing() {
        for (Precision p : new Precision[]{Precision.F16, Precision.BF16}) {
            float big = p == Precision.F16 ? 65520f : Float.intBitsToFloat(0x7f7f8000);
            float largest = p == Precision.F16 ? Math.nextDown(65520f) : Math.nextDown(big);
            KvCache cache = KvCache.create(2, 2, 16, 4, p);
            SplittableRandom random = new SplittableRandom(3);
            Tensor k = RandomTensors.uniform(random, 2, 2, 3, 16), v = RandomTensors.uniform(random, 2, 2, 3, 16);
            cache.append(k, v);
            Tensor q = RandomTensors.uniform(random, 2, 4, 1, 16);
            float[] before = ScaledDotProductAttention.builder().build().attend(q, cache, AttentionMask.none()).toArray();

            float[] bad = RandomTensors.uniformArray(random, 2 * 2 * 3 * 16);
            bad[(1 * 2 + 1) * 3 * 16 + 2 * 16 + 5] = -big;     // row 1, kv head 1, token 2, element 5
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> cache.append(Tensor.zeros(2, 2, 3, 16), Tensor.of(bad, 2, 2, 3, 16)));
            assertTrue(e.getMessage().startsWith("v: expected values " + p + " can hold"), e.getMessage());
            assertTrue(e.getMessage().contains("got " + -big + " at batch row 1, kv head 1, token 2, element 5"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> cache.append(Tensor.of(bad, 2, 2, 3, 16), Tensor.zeros(2, 2, 3, 16), new int[]{3, 3}));
            assertTrue(e.getMessage().startsWith("k: "), e.getMessage());
            // Row 1 sits this one out, so the bad value is never read: accepted.
            cache.append(Tensor.of(bad, 2, 2, 3, 16), Tensor.zeros(2, 2, 3, 16), new int[]{3, 2});
            cache.truncate(3);
            assertArrayEquals(before, ScaledDotProductAttention.builder().build().attend(q, cache, AttentionMask.none()).toArray(),
                    p + ": the rejected appends changed the cache");
            assertEquals(3, cache.length(0));

            // The largest value that does not overflow is kept (rounded to the largest finite value), not rejected.
            float[] edge = new float[16];
            edge[0] = largest;
            edge[1] = -largest;
            KvCache one = KvCache.create(1, 1, 16, 1, p);
            one.append(Tensor.of(edge, 1, 1, 1, 16), Tensor.of(edge, 1, 1, 1, 16));
            float[] out = ScaledDotProductAttention.builder().build().attend(Tensor.zeros(1, 1, 1, 16), one, AttentionMask.none()).toArray();
            float max = p == Precision.F16 ? 65504f : Float.intBitsToFloat(0x7f7f0000);
            assertEquals(max, out[0]);
            assertEquals(-max, out[1]);
        }
    }

    @Test
    void precisionIsReportedAndRequired() {
        assertSame(Precision.F32, KvCache.create(1, 1, 8, 0).precision());
        for (Precision p : Precision.values()) {
            assertSame(p, KvCache.create(1, 1, 8, 0, p).precision());
            MultiHeadAttention m = MultiHeadAttention.builder(16, 2).seed(1).build();
            KvCache cache = m.newKvCache(2, 3, p);
            assertSame(p, cache.precision());
            assertEquals(2, cache.batch());
            assertTrue(cache.capacity() >= 3);
        }
        assertThrows(NullPointerException.class, () -> KvCache.create(1, 1, 8, 0, null));
        assertThrows(NullPointerException.class, () -> MultiHeadAttention.builder(16, 2).build().newKvCache(1, 1, null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KvCache.create(1, 0, 8, 0, Precision.INT8));
        assertTrue(e.getMessage().startsWith("kvHeads"), e.getMessage());
    }
}
