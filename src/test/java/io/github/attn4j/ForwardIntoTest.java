package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code out} overloads of {@link MultiHeadAttention#forward} and
 * {@link ScaledDotProductAttention#attend} give the bits of the allocating overloads (which the
 * other tests hold against the double-precision reference) in array- and segment-backed tensors,
 * in place over their own inputs, and reject bad {@code out} arguments before writing anything.
 */
class ForwardIntoTest {
    /** An array-backed tensor of the shape full of NaN, so that an element the call does not write shows. */
    private static Tensor nanArray(int... shape) {
        Tensor t = Tensor.zeros(shape);
        float[] nan = new float[t.size()];
        Arrays.fill(nan, Float.NaN);
        t.copyFrom(nan);
        return t;
    }

    /** A native, deliberately not 8-aligned segment-backed tensor full of NaN. */
    private static Tensor nanSegment(Arena arena, int... shape) {
        long n = 1;
        for (int d : shape) {
            n *= d;
        }
        MemorySegment s = arena.allocate(4 * n + 4, 4).asSlice(4);
        for (long i = 0; i < n; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, Float.NaN);
        }
        return Tensor.of(s, shape);
    }

    private static MultiHeadAttention module(int e, int h, int kvHeads, boolean rotary, int threads) {
        MultiHeadAttentionBuilder b = MultiHeadAttention.builder(e, h).kvHeads(kvHeads).seed(e + h).threads(threads);
        return rotary ? b.rotary(RotaryEmbedding.of(e / h, 10000)).build() : b.build();
    }

    @Test
    void moduleIntoEqualsForwardForEveryMaskAndThreadCount() {
        SplittableRandom random = new SplittableRandom(21);
        for (int threads = 1; threads <= 2; threads++) {
            for (int kind = 0; kind < RandomMasks.KINDS; kind++) {
                int batch = 1 + random.nextInt(3), lq = 1 + random.nextInt(40), lk = 1 + random.nextInt(40);
                MultiHeadAttention m = module(32, 4, kind % 2 == 0 ? 4 : 2, kind % 3 == 0, threads);
                Tensor x = uniform(random, batch, lq, 32), memory = uniform(random, batch, lk, 32);
                AttentionMask selfMask = RandomMasks.of(kind, random, batch, 4, lq, lq);
                AttentionMask crossMask = RandomMasks.of(kind, random, batch, 4, lq, lk);
                String what = "kind " + kind + ", threads " + threads;

                Tensor out = nanArray(batch, lq, 32);
                assertSame(out, m.forward(x, selfMask, out));
                assertArrayEquals(m.forward(x, selfMask).toArray(), out.toArray(), 0f, what + ", self");
                assertSame(out, m.forward(x, memory, memory, crossMask, out));
                assertArrayEquals(m.forward(x, memory, memory, crossMask).toArray(), out.toArray(), 0f, what + ", cross");
            }
        }
    }

    @Test
    void moduleIntoSegmentEqualsForward() {
        SplittableRandom random = new SplittableRandom(22);
        MultiHeadAttention m = module(48, 3, 3, false, 2);
        Tensor x = uniform(random, 2, 29, 48), memory = uniform(random, 2, 17, 48);
        try (Arena arena = Arena.ofConfined()) {
            Tensor out = nanSegment(arena, 2, 29, 48);
            for (int call = 0; call < 2; call++) {
                assertSame(out, m.forward(x, AttentionMask.causal(), out));
                assertArrayEquals(m.forward(x, AttentionMask.causal()).toArray(), out.toArray(), 0f, "self, call " + call);
                m.forward(x, memory, memory, AttentionMask.none(), out);
                assertArrayEquals(m.forward(x, memory, memory, AttentionMask.none()).toArray(), out.toArray(), 0f, "cross");
            }
        }
    }

    @Test
    void moduleIntoItsOwnInputIsInPlace() {
        SplittableRandom random = new SplittableRandom(23);
        MultiHeadAttention m = module(32, 4, 4, true, 2);
        Tensor x = uniform(random, 3, 25, 32);
        float[] expected = m.forward(x, AttentionMask.causal()).toArray();
        assertSame(x, m.forward(x, AttentionMask.causal(), x));
        assertArrayEquals(expected, x.toArray(), 0f, "self-attention over x into x");

        Tensor q = uniform(random, 3, 25, 32), kv = uniform(random, 3, 25, 32);
        float[] cross = m.forward(q, kv, kv, AttentionMask.none()).toArray();
        m.forward(q, kv, kv, AttentionMask.none(), kv);
        assertArrayEquals(cross, kv.toArray(), 0f, "cross-attention into its keys and values");
    }

    @Test
    void moduleIntoItsMaskTensorReadsTheMaskFirst() {
        SplittableRandom random = new SplittableRandom(24);
        MultiHeadAttention m = module(32, 4, 4, false, 1);
        Tensor query = uniform(random, 1, 8, 32), memory = uniform(random, 1, 32, 32);
        Tensor bias = Tensor.of(RandomTensors.uniformArray(random, 8 * 32), 8, 32);
        float[] expected = m.forward(query, memory, memory, AttentionMask.additive(bias)).toArray();
        Tensor out = bias.reshape(1, 8, 32);     // the same array as the mask's bias
        m.forward(query, memory, memory, AttentionMask.additive(bias), out);
        assertArrayEquals(expected, out.toArray(), 0f);
    }

    @Test
    void moduleRejectsBadOut() {
        MultiHeadAttention m = module(32, 4, 4, false, 1);
        Tensor x = uniform(new SplittableRandom(25), 2, 7, 32);
        NullPointerException npe = assertThrows(NullPointerException.class, () -> m.forward(x, AttentionMask.none(), null));
        assertTrue(npe.getMessage().contains("out"), npe.getMessage());
        assertThrows(NullPointerException.class, () -> m.forward(x, x, x, AttentionMask.none(), null));

        Tensor wrong = nanArray(2, 8, 32);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.forward(x, AttentionMask.none(), wrong));
        assertEquals("out: expected shape [2, 7, 32] (B, Lq, E), got shape [2, 8, 32]", e.getMessage());
        assertTrue(Float.isNaN(wrong.get(0, 0, 0)), "a rejected out is left as it was");
        IllegalArgumentException rank = assertThrows(IllegalArgumentException.class,
                () -> m.forward(x, x, x, AttentionMask.none(), nanArray(14, 32)));
        assertEquals("out: expected shape [2, 7, 32] (B, Lq, E), got shape [14, 32]", rank.getMessage());

        Tensor readOnly = Tensor.of(MemorySegment.ofArray(new float[2 * 7 * 32 + 1]).asSlice(4).asReadOnly(), 2, 7, 32);
        IllegalArgumentException ro = assertThrows(IllegalArgumentException.class, () -> m.forward(x, AttentionMask.none(), readOnly));
        assertEquals("out: expected a writable tensor, got a tensor over a read-only segment", ro.getMessage());
    }

    @Test
    void attendIntoEqualsAttend() {
        SplittableRandom random = new SplittableRandom(26);
        for (int threads = 1; threads <= 2; threads++) {
            ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(threads).build();
            for (int kind = 0; kind < RandomMasks.KINDS; kind++) {
                int batch = 1 + random.nextInt(2), lq = 1 + random.nextInt(40), lk = 1 + random.nextInt(40);
                Tensor q = uniform(random, batch, 4, lq, 16), k = uniform(random, batch, 2, lk, 16), v = uniform(random, batch, 2, lk, 9);
                AttentionMask mask = RandomMasks.of(kind, random, batch, 4, lq, lk);
                float[] expected = sdpa.attend(q, k, v, mask).toArray();
                Tensor out = nanArray(batch, 4, lq, 9);
                assertSame(out, sdpa.attend(q, k, v, mask, out));
                assertArrayEquals(expected, out.toArray(), 0f, "kind " + kind + ", threads " + threads);
                try (Arena arena = Arena.ofConfined()) {
                    Tensor segment = nanSegment(arena, batch, 4, lq, 9);
                    sdpa.attend(q, k, v, mask, segment);
                    assertArrayEquals(expected, segment.toArray(), 0f, "segment, kind " + kind + ", threads " + threads);
                }
            }
        }
    }

    @Test
    void attendIntoItsInputsComputesAsideFirst() {
        SplittableRandom random = new SplittableRandom(27);
        ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(2).build();
        Tensor q = uniform(random, 2, 4, 33, 16), k = uniform(random, 2, 4, 33, 16), v = uniform(random, 2, 4, 33, 16);
        float[] expected = sdpa.attend(q, k, v, AttentionMask.causal()).toArray();
        sdpa.attend(q, k, v, AttentionMask.causal(), q);
        assertArrayEquals(expected, q.toArray(), 0f, "into q");
        q = uniform(random, 2, 4, 33, 16);
        expected = sdpa.attend(q, k, v, AttentionMask.none()).toArray();
        sdpa.attend(q, k, v, AttentionMask.none(), v);
        assertArrayEquals(expected, v.toArray(), 0f, "into v");

        Tensor bias = uniform(random, 2, 4, 33, 16);     // scores (B, H, Lq, Lk = 16)
        Tensor keys = uniform(random, 2, 4, 16, 16), values = uniform(random, 2, 4, 16, 16);
        expected = sdpa.attend(q, keys, values, AttentionMask.additive(bias)).toArray();
        sdpa.attend(q, keys, values, AttentionMask.additive(bias), bias);
        assertArrayEquals(expected, bias.toArray(), 0f, "into the mask's bias");
    }

    @Test
    void attendRejectsBadOut() {
        SplittableRandom random = new SplittableRandom(28);
        ScaledDotProductAttention sdpa = ScaledDotProductAttention.builder().threads(1).build();
        Tensor q = uniform(random, 1, 2, 5, 8), k = uniform(random, 1, 2, 6, 8), v = uniform(random, 1, 2, 6, 3);
        assertThrows(NullPointerException.class, () -> sdpa.attend(q, k, v, AttentionMask.none(), null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> sdpa.attend(q, k, v, AttentionMask.none(), nanArray(1, 2, 5, 8)));
        assertEquals("out: expected shape [1, 2, 5, 3] (B, H, Lq, dv), got shape [1, 2, 5, 8]", e.getMessage());
    }
}
