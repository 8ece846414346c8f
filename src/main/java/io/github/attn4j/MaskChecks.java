package io.github.attn4j;

import java.util.Arrays;
import java.util.List;

/**
 * The shape checks of {@link AttentionMask}: whether each part fits the scores of a call, and
 * whether a keep or additive tensor has a broadcastable rank. Messages are built only on failure.
 */
final class MaskChecks {
    private MaskChecks() {
    }

    /** See {@link AttentionMask#checkApplicable}. */
    static void applicable(List<AttentionMask.Part> parts, int batch, int heads, int queries, int keys) {
        for (AttentionMask.Part part : parts) {
            switch (part) {
                case AttentionMask.Causal c -> {
                }
                case AttentionMask.SlidingWindow w -> {
                }
                case AttentionMask.Alibi a -> {
                    if (a.heads() != heads) {
                        throw Checks.fail("mask.alibi", heads + " slopes (one per query head) for scores "
                                + scores(batch, heads, queries, keys), a.heads() + " slopes");
                    }
                }
                case AttentionMask.KeyPadding p -> {
                    if (p.batch() != batch) {
                        throw Checks.fail("mask.keyPadding",
                                batch + " rows (B) for scores " + scores(batch, heads, queries, keys), p.batch() + " rows");
                    }
                    if (!(batch == 0 || p.keys() == keys)) {
                        throw Checks.fail("mask.keyPadding",
                                keys + " keys per row (Lk) for scores " + scores(batch, heads, queries, keys),
                                p.keys() + " keys per row");
                    }
                }
                case AttentionMask.Keep k -> broadcast(k.keep(), "mask.keep", batch, heads, queries, keys);
                case AttentionMask.Additive a -> broadcast(a.bias(), "mask.additive", batch, heads, queries, keys);
            }
        }
    }

    static void broadcastRank(Tensor t, String name) {
        Checks.notNull(t, name);
        if (!(t.rank() == 2 || t.rank() == 4)) {
            throw Checks.fail(name, "rank 2 (Lq or 1, Lk) or rank 4 (B or 1, H or 1, Lq or 1, Lk)",
                    "shape " + Arrays.toString(t.shape()));
        }
    }

    private static void broadcast(Tensor t, String name, int b, int h, int q, int k) {
        int[] s = t.shape();
        boolean ok = s.length == 2
                ? (s[0] == q || s[0] == 1) && s[1] == k
                : (s[0] == b || s[0] == 1) && (s[1] == h || s[1] == 1) && (s[2] == q || s[2] == 1) && s[3] == k;
        if (!ok) {
            String expected = s.length == 2 ? "shape (" + q + " or 1, " + k + ")"
                    : "shape (" + b + " or 1, " + h + " or 1, " + q + " or 1, " + k + ")";
            throw Checks.fail(name, expected + " broadcastable to scores " + scores(b, h, q, k), Arrays.toString(s));
        }
    }

    private static String scores(int batch, int heads, int queries, int keys) {
        return "(B=" + batch + ", H=" + heads + ", Lq=" + queries + ", Lk=" + keys + ")";
    }
}
