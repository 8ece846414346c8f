package io.github.attn4j;

import io.github.attn4j.internal.kernel.PackedMatrix;
import io.github.attn4j.internal.kernel.WeightRows;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * The four projection weights wq, wk, wv, wo as a {@link MultiHeadAttentionBuilder} was given
 * them: float arrays, segments of a model file's bytes in one format, or nothing (the seeded
 * initialization). {@link #resolve} checks their sizes against the module's shape and gives each
 * as the rows the packing reads; nothing is copied here.
 */
final class GivenWeights {
    /** No weights given: the seeded initialization. */
    static final GivenWeights NONE = new GivenWeights(null, null, PackedMatrix.Format.F32);

    private static final String[] NAMES = {"wq", "wk", "wv", "wo"};

    private final float[][] arrays;
    private final MemorySegment[] segments;
    private final PackedMatrix.Format format;

    private GivenWeights(float[][] arrays, MemorySegment[] segments, PackedMatrix.Format format) {
        this.arrays = arrays;
        this.segments = segments;
        this.format = format;
    }

    /** Float arrays, each checked non-null. */
    static GivenWeights arrays(float[] wq, float[] wk, float[] wv, float[] wo) {
        return new GivenWeights(new float[][]{Checks.notNull(wq, "wq"), Checks.notNull(wk, "wk"),
            Checks.notNull(wv, "wv"), Checks.notNull(wo, "wo")}, null, PackedMatrix.Format.F32);
    }

    /** Segments of little-endian {@code format} values, each checked non-null. */
    static GivenWeights segments(PackedMatrix.Format format, MemorySegment wq, MemorySegment wk, MemorySegment wv,
                                 MemorySegment wo) {
        return new GivenWeights(null, new MemorySegment[]{Checks.notNull(wq, "wq"), Checks.notNull(wk, "wk"),
            Checks.notNull(wv, "wv"), Checks.notNull(wo, "wo")}, format);
    }

    /** The format the weights were given in (F32 for arrays and the seeded initialization). */
    PackedMatrix.Format format() {
        return format;
    }

    /**
     * wq {@code (qWidth, E)}, wk {@code (kvWidth, keyDim)}, wv {@code (kvWidth, valueDim)} and
     * wo {@code (E, qWidth)}, sizes checked; without given weights, PyTorch's initialization from
     * {@code seed}: Q/K/V Xavier-uniform over the stacked matrix (each on its own when keyDim or
     * valueDim differ from E), wo uniform in {@code ±1/√qWidth}.
     */
    WeightRows[] resolve(int qWidth, int kvWidth, int embedDim, int keyDim, int valueDim, long seed) {
        int[] rows = {qWidth, kvWidth, kvWidth, embedDim};
        int[] cols = {embedDim, keyDim, valueDim, qWidth};
        String[] layouts = {"(H*hd " + qWidth + " x E " + embedDim + ")", "(KVH*hd " + kvWidth + " x keyDim " + keyDim + ")",
            "(KVH*hd " + kvWidth + " x valueDim " + valueDim + ")", "(E " + embedDim + " x H*hd " + qWidth + ")"};
        float[][] w = arrays;
        if (w == null && segments == null) {
            SplittableRandom random = new SplittableRandom(seed);
            boolean sameWidths = keyDim == embedDim && valueDim == embedDim;
            float qkvBound = (float) Math.sqrt(6.0 / (embedDim + qWidth + 2L * kvWidth));
            w = new float[4][];
            for (int i = 0; i < 3; i++) {
                w[i] = uniform(random, (long) rows[i] * cols[i], sameWidths ? qkvBound : xavier(cols[i], rows[i]));
            }
            w[3] = uniform(random, (long) embedDim * qWidth, (float) (1.0 / Math.sqrt(qWidth)));
        }
        WeightRows[] resolved = new WeightRows[4];
        for (int i = 0; i < 4; i++) {
            if (w != null) {
                Checks.length(w[i], (long) rows[i] * cols[i], NAMES[i], layouts[i]);
                resolved[i] = WeightRows.of(NAMES[i], w[i], rows[i], cols[i]);
            } else {
                int bytes = format == PackedMatrix.Format.F32 ? 4 : 2;
                long expected = (long) bytes * rows[i] * cols[i];
                if (segments[i].byteSize() != expected) {
                    throw Checks.fail(NAMES[i], "byteSize " + expected + " (" + bytes
                            + " bytes per " + format + " element of " + layouts[i] + ")", "byteSize " + segments[i].byteSize());
                }
                resolved[i] = WeightRows.of(NAMES[i], segments[i], format, rows[i], cols[i]);
            }
        }
        return resolved;
    }

    private static float xavier(long fanIn, long fanOut) {
        return (float) Math.sqrt(6.0 / (fanIn + fanOut));
    }

    private static float[] uniform(SplittableRandom random, long n, float bound) {
        float[] w = new float[(int) n];
        for (int i = 0; i < w.length; i++) {
            w[i] = (float) random.nextDouble(-bound, bound);
        }
        return w;
    }
}
