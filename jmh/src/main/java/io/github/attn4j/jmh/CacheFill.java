package io.github.attn4j.jmh;

import io.github.attn4j.KvCache;
import io.github.attn4j.Tensor;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Fills a {@link KvCache} with random keys and values through {@code cache.append}, much faster
 * than running the prefill that would produce them (decode speed does not depend on the values).
 */
final class CacheFill {
    /** Tokens per append. */
    static final int CHUNK = 512;

    private CacheFill() {
    }

    /**
     * Appends random keys and values until row {@code b} holds {@code lengths[b]} more tokens:
     * chunks of {@link #CHUNK} tokens of one random {@code (B, KVH, CHUNK, d)} pair, with
     * {@code append(k, v)} while every row takes a whole chunk and {@code append(k, v, tokens)}
     * (each row its own count, 0 when it is done) otherwise.
     *
     * @throws IllegalStateException if a row does not end up holding its length
     */
    static void fill(KvCache cache, int[] lengths, SplittableRandom random) {
        int batch = cache.batch();
        if (lengths.length != batch) {
            throw new IllegalArgumentException("lengths: expected " + batch + " rows, got " + lengths.length);
        }
        int[] start = new int[batch];
        for (int b = 0; b < batch; b++) {
            start[b] = cache.length(b);
        }
        Tensor k = Inputs.uniform(random, batch, cache.kvHeads(), CHUNK, cache.headDim());
        Tensor v = Inputs.uniform(random, batch, cache.kvHeads(), CHUNK, cache.headDim());
        int[] done = new int[batch];
        int[] tokens = new int[batch];
        while (true) {
            boolean any = false, whole = true;
            for (int b = 0; b < batch; b++) {
                tokens[b] = Math.min(CHUNK, lengths[b] - done[b]);
                any |= tokens[b] > 0;
                whole &= tokens[b] == CHUNK;
            }
            if (!any) {
                break;
            }
            if (whole) {
                cache.append(k, v);
            } else {
                cache.append(k, v, tokens.clone());
            }
            for (int b = 0; b < batch; b++) {
                done[b] += tokens[b];
            }
        }
        for (int b = 0; b < batch; b++) {
            if (cache.length(b) != start[b] + lengths[b]) {
                throw new IllegalStateException("row " + b + " holds " + cache.length(b) + " tokens, expected "
                        + (start[b] + lengths[b]) + " (lengths " + Arrays.toString(lengths) + ")");
            }
        }
    }
}
