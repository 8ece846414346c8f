package io.github.attn4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input to the decoder features gives an IllegalArgumentException that names the argument, the expected and the actual value. */
class DecoderValidationTest {
    @Test
    void masks() {
        rejects(() -> AttentionMask.slidingWindow(0), "window", "at least 1", "0");
        rejects(() -> AttentionMask.alibi(new float[0]), "slopes", "one slope per query head", "length 0");
        rejects(() -> AttentionMask.alibi(new float[]{1f, Float.NaN}), "slopes[1]", "finite", "NaN");
        assertThrows(NullPointerException.class, () -> AttentionMask.alibi(null));
        Tensor q = Tensor.zeros(1, 4, 3, 8), k = Tensor.zeros(1, 2, 3, 8);
        rejects(() -> ScaledDotProductAttention.apply(q, k, k, AttentionMask.alibi(new float[3])), "mask.alibi", "4 slopes", "3 slopes");
    }

    @Test
    void scaledDotProductOptions() {
        rejects(() -> ScaledDotProductAttention.builder().softcap(Float.POSITIVE_INFINITY), "softcap", "finite positive", "Infinity");
        rejects(() -> ScaledDotProductAttention.builder().softcap(0f), "softcap", "finite positive", "0.0");
        rejects(() -> ScaledDotProductAttention.builder().scale(Float.NaN), "scale", "finite", "NaN");
        rejects(() -> ScaledDotProductAttention.builder().sinks(new float[]{0f, Float.NEGATIVE_INFINITY}), "sinks[1]", "finite", "-Infinity");
        rejects(() -> ScaledDotProductAttention.builder().threads(0), "threads", "positive", "0");
        Tensor q = Tensor.zeros(1, 4, 3, 8), k = Tensor.zeros(1, 2, 3, 8);
        ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().sinks(new float[3]).build();
        rejects(() -> sdpa.attend(q, k, k, AttentionMask.none()), "sinks", "one logit per query head (4)", "length 3");
    }

    @Test
    void caches() {
        rejects(() -> KvCache.create(-1, 2, 8, 4), "batch", "non-negative", "-1");
        rejects(() -> KvCache.create(1, 0, 8, 4), "kvHeads", "positive", "0");
        rejects(() -> KvCache.create(1, 2, 0, 4), "headDim", "positive", "0");
        rejects(() -> KvCache.create(1, 2, 8, -4), "capacity", "non-negative", "-4");
        KvCache cache = KvCache.create(2, 2, 8, 4);
        Tensor kv = Tensor.zeros(2, 2, 3, 8);
        rejects(() -> cache.append(Tensor.zeros(2, 3, 3, 8), Tensor.zeros(2, 3, 3, 8)), "k", "kvHeads of the cache = 2", "[2, 3, 3, 8]");
        rejects(() -> cache.append(kv, Tensor.zeros(2, 2, 2, 8)), "v", "the shape of k", "[2, 2, 2, 8]");
        rejects(() -> cache.append(kv, kv, new int[]{1}), "tokens", "one count per batch row (2)", "length 1");
        rejects(() -> cache.append(kv, kv, new int[]{1, 4}), "tokens[1]", "[0, T = 3]", "4");
        rejects(() -> cache.append(kv, kv, new int[]{-1, 0}), "tokens[0]", "[0, T = 3]", "-1");
        cache.append(kv, kv, new int[]{3, 1});
        assertEquals(3, cache.length(0));
        assertEquals(1, cache.length(1));
        rejects(() -> cache.length(2), "row", "[0, 2)", "2");
        rejects(() -> cache.truncate(-1, 0), "row", "[0, 2)", "-1");
        rejects(() -> cache.truncate(1, 2), "newLength", "[0, 1] (row 1)", "2");
        rejects(() -> cache.reset(5), "row", "[0, 2)", "5");
        rejects(() -> cache.truncate(2), "newLength", "[0, 1]", "2");
        ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().build();
        rejects(() -> sdpa.attend(Tensor.zeros(2, 4, 2, 8), cache, AttentionMask.none()), "cache.length(1)", "at least T = 2", "1");
        rejects(() -> sdpa.attend(Tensor.zeros(2, 3, 1, 8), cache, AttentionMask.none()), "q", "multiple of the cache's 2 kv heads", "3");
        rejects(() -> sdpa.attend(Tensor.zeros(1, 4, 1, 8), cache, AttentionMask.none()), "q", "batch B of the cache = 2", "[1, 4, 1, 8]");
        cache.reset(0);
        assertEquals(0, cache.length(0));
        assertEquals(1, cache.length(1));
    }

    private static void rejects(Executable call, String name, String expected, String actual) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        String m = e.getMessage();
        assertTrue(m.startsWith(name + ":") && m.contains(expected) && m.contains(actual), m);
    }
}
