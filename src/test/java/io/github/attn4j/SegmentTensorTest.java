package io.github.attn4j;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static io.github.attn4j.RandomTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Tensors over {@link MemorySegment}s give the same bits as tensors over arrays. */
class SegmentTensorTest {
    private static Tensor onNative(Arena arena, Tensor t) {
        MemorySegment s = arena.allocate(4L * t.size() + 4, 4).asSlice(4);   // deliberately not 8-aligned
        MemorySegment.copy(t.toArray(), 0, s, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, t.size());
        return Tensor.of(s.asReadOnly(), t.shape());
    }

    @Test
    void scaledDotProductOnNativeSegmentsEqualsArrays() {
        SplittableRandom random = new SplittableRandom(1);
        Tensor q = uniform(random, 2, 4, 37, 16), k = uniform(random, 2, 2, 70, 16), v = uniform(random, 2, 2, 70, 9);
        try (Arena arena = Arena.ofConfined()) {
            for (AttentionMask mask : new AttentionMask[]{AttentionMask.none(), AttentionMask.causal()}) {
                assertArrayEquals(ScaledDotProductAttention.apply(q, k, v, mask).toArray(),
                        ScaledDotProductAttention.apply(onNative(arena, q), onNative(arena, k), onNative(arena, v), mask).toArray(), 0f);
            }
        }
    }

    @Test
    void moduleOnNativeSegmentsEqualsArrays() {
        SplittableRandom random = new SplittableRandom(2);
        MultiHeadAttention m = MultiHeadAttention.builder(32, 4).kvHeads(2).seed(3).build();
        Tensor x = uniform(random, 2, 19, 32), memory = uniform(random, 2, 23, 32);
        try (Arena arena = Arena.ofConfined()) {
            Tensor xs = onNative(arena, x), ms = onNative(arena, memory);
            assertArrayEquals(m.forward(x, AttentionMask.causal()).toArray(), m.forward(xs, AttentionMask.causal()).toArray(), 0f);
            assertArrayEquals(m.forward(x, memory, memory, AttentionMask.none()).toArray(),
                    m.forward(xs, ms, ms, AttentionMask.none()).toArray(), 0f);
            KvCache a = m.newKvCache(2, 4), b = m.newKvCache(2, 4);
            assertArrayEquals(m.forwardCached(x, a).toArray(), m.forwardCached(xs, b).toArray(), 0f);
        }
    }

    @Test
    void aSegmentOverAWholeArraySharesIt() {
        float[] a = {1, 2, 3, 4, 5, 6};
        Tensor t = Tensor.of(MemorySegment.ofArray(a), 2, 3);
        a[4] = 50;
        assertEquals(50f, t.get(1, 1));
        Tensor slice = Tensor.of(MemorySegment.ofArray(a).asSlice(8), 2, 2);
        assertArrayEquals(new float[]{3, 4, 50, 6}, slice.toArray());
        assertEquals(6f, slice.reshape(4).get(3));
    }

    @Test
    void aSegmentOfTheWrongSizeIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(MemorySegment.ofArray(new float[5]), 2, 3));
        assertTrue(e.getMessage().startsWith("segment: expected byteSize 24"), e.getMessage());
        assertTrue(e.getMessage().contains("got byteSize 20"), e.getMessage());
    }
}
