package io.github.attn4j;

import io.github.attn4j.internal.kernel.HeadLayout;
import io.github.attn4j.internal.kernel.MatrixView;
import io.github.attn4j.internal.kernel.Parallel;
import io.github.attn4j.internal.kernel.PackedMatrix;
import io.github.attn4j.internal.kernel.WeightRows;

/**
 * The one projection-to-attention pipeline of {@link MultiHeadAttention}, which every entry point
 * runs after checking its arguments: project, per-head transforms, attend (the caller's step),
 * merge heads (the token-major layout already is the merge), output projection. It owns the
 * module's packed projections: when the q, k and v widths line up with the GEMM panels, the
 * three weights are packed as one stacked matrix that self-attention multiplies in one pass and
 * cross-attention reads as column views.
 */
final class AttentionPipeline {
    /**
     * The attention step: reads the heads of q, k and v, writes the heads of {@code attended}, on
     * up to {@code threads} threads. The layouts hold batch rows {@code [firstBatch, firstBatch +
     * q.batch())} of the call, numbered from 0 (all of them, unless the call runs in chunks).
     */
    @FunctionalInterface
    interface Attend {
        void run(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout attended, int firstBatch, int threads);
    }

    /**
     * Rows (batch rows times tokens) a chunk of a chunked self-attention call aims at: its q | k | v
     * projection (a few hundred floats wide, in a buffer of the thread reused by its next chunk)
     * then stays in the core's 1 MiB L2 for its attention.
     */
    static final int CHUNK_ROWS = 256;

    private final int embedDim;
    private final int numHeads;
    private final int kvHeads;
    private final int headDim;
    private final int threads;
    private final HeadTransforms transforms;
    private final Projection q;
    private final Projection k;
    private final Projection v;
    /**
     * The projections self-attention runs, writing q | k | v side by side: the stacked one, or
     * q, k and v; null when keyDim or valueDim differ from embedDim.
     */
    private final Projection[] selfProjections;
    private final Projection out;

    AttentionPipeline(MultiHeadAttentionBuilder b, MultiHeadAttentionBuilder.Weights w, HeadTransforms transforms) {
        this.embedDim = b.embedDim;
        this.numHeads = b.numHeads;
        this.kvHeads = b.kvHeads;
        this.headDim = b.headDim;
        this.threads = b.threads;
        this.transforms = transforms;
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        boolean selfAttention = b.keyDim == embedDim && b.valueDim == embedDim;
        int panel = PackedMatrix.panelWidth();
        if (selfAttention && qWidth % panel == 0 && kvWidth % panel == 0) {
            Projection qkv = Projection.stacked(new WeightRows[]{w.wq(), w.wk(), w.wv()},
                    new float[][]{w.bq(), w.bk(), w.bv()}, w.format());
            this.q = qkv.columns(0, qWidth);
            this.k = qkv.columns(qWidth, qWidth + kvWidth);
            this.v = qkv.columns(qWidth + kvWidth, qWidth + 2 * kvWidth);
            this.selfProjections = new Projection[]{qkv};
        } else {
            this.q = Projection.of(w.wq(), w.bq(), w.format());
            this.k = Projection.of(w.wk(), w.bk(), w.format());
            this.v = Projection.of(w.wv(), w.bv(), w.format());
            this.selfProjections = selfAttention ? new Projection[]{q, k, v} : null;
        }
        this.out = Projection.of(w.wo(), w.bo(), w.format());
    }

    /**
     * Runs the pipeline with {@code attend} as its attention step. Query and key {@code t} of
     * batch row {@code b} sit at position {@code start[b] + t} ({@code t} when {@code start} is
     * null). Self-attention ({@code query == key == value}) projects with the fused q | k | v
     * projection. The output goes into {@code target} (already checked), or into a new tensor
     * when it is null; either is returned.
     *
     * <p>When {@code chunkable} (the caller's attention step can run on a chunk of the batch and
     * does not read {@code target}'s array, as a mask tensor over it would), a batch of short
     * sequences (an encoder batch, or prompts prefilled without a cache) runs in chunks of whole
     * batch rows, about {@link #CHUNK_ROWS} rows each, at least two per thread: each chunk is
     * projected, transformed (QK-norm, RoPE), attended and projected out by one thread in that
     * thread's chunk-sized buffers, while its projections are in that core's cache, instead of
     * each stage running over the whole batch on every thread. Every row gets the same bits either
     * way, and the scratch does not grow with the batch.
     */
    Tensor run(Tensor query, Tensor key, Tensor value, int[] start, Tensor target, boolean chunkable, Attend attend) {
        int batch = query.dim(0), lq = query.dim(1), lk = key.dim(1);
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        boolean self = query == key && key == value && selfProjections != null;
        // Every size is checked before any work starts.
        int width = qWidth + 2 * kvWidth;
        int qkvSize = self ? Checks.elementCount("projected q|k|v (B*L, H*hd + 2*KVH*hd)", batch, lq, width) : 0;
        int qSize = Checks.elementCount("projected query (B*Lq, H*hd)", batch, lq, qWidth);
        int kvSize = self ? 0 : Checks.elementCount("projected key/value (B*Lk, KVH*hd)", batch, lk, kvWidth);
        int outSize = Checks.elementCount("output (B, Lq, E)", batch, lq, embedDim);

        HeadLayout qh, kh, vh;
        int perChunk = CHUNK_ROWS / Math.max(lq, 1);
        if (self && start == null && perChunk >= 2
                && (batch + perChunk - 1) / perChunk >= 2 * threads && chunkable) {
            return chunked(query, batch, lq, perChunk, outSize, target, attend);
        }
        if (self) {
            float[] buf = Scratch.get(Scratch.PROJECTED, qkvSize);
            projectSelf(selfProjections[0].rowsOf(query.data(), batch * lq), 0, batch * lq, buf, width, threads);
            qh = HeadLayout.tokenMajor(buf, 0, batch, lq, numHeads, headDim, width);
            kh = HeadLayout.tokenMajor(buf, qWidth, batch, lk, kvHeads, headDim, width);
            vh = HeadLayout.tokenMajor(buf, qWidth + kvWidth, batch, lk, kvHeads, headDim, width);
        } else {
            qh = HeadLayout.tokenMajor(q.apply(query.data(), batch * lq, qSize, threads), 0, batch, lq, numHeads, headDim, qWidth);
            kh = HeadLayout.tokenMajor(k.apply(key.data(), batch * lk, kvSize, threads), 0, batch, lk, kvHeads, headDim, kvWidth);
            vh = HeadLayout.tokenMajor(v.apply(value.data(), batch * lk, kvSize, threads), 0, batch, lk, kvHeads, headDim, kvWidth);
        }
        if (!transforms.isIdentity()) {
            HeadTransforms.Positions qp = transforms.at(positions(start, batch, lq), batch, lq);
            transforms.applyToQueries(qh, qp);
            transforms.applyToKeys(kh, lk == lq ? qp : transforms.at(positions(start, batch, lk), batch, lk));
        }
        float[] attended = Scratch.get(Scratch.ATTENDED, qSize);
        attend.run(qh, kh, vh, HeadLayout.tokenMajor(attended, 0, batch, lq, numHeads, headDim, qWidth), 0, threads);
        if (target == null) {
            return Tensor.of(out.apply(attended, batch * lq, outSize, threads), batch, lq, embedDim);
        }
        // Inputs and masks were all read above, so target may share their storage.
        float[] y = Outputs.buffer(target, false);
        out.applyInto(attended, 0, batch * lq, y, 0, embedDim, threads);
        Outputs.publish(target, y);
        return target;
    }

    /**
     * Self-attention in chunks of {@code perChunk} batch rows, one thread per chunk, each in its
     * thread's chunk-sized buffers. A chunk reads only its own rows of the input and writes only
     * its own rows of the output, so the output may be the input's array; the caller has excluded
     * an output that the attention step reads.
     */
    private Tensor chunked(Tensor query, int batch, int lq, int perChunk, int outSize, Tensor target, Attend attend) {
        int qWidth = numHeads * headDim;
        int kvWidth = kvHeads * headDim;
        int width = qWidth + 2 * kvWidth;
        MatrixView input = selfProjections[0].rowsOf(query.data(), batch * lq);
        float[] y = target == null ? new float[outSize] : Outputs.buffer(target, false);
        int chunks = (batch + perChunk - 1) / perChunk;
        // Every chunk's tokens sit at positions 0..lq-1: one table serves them all.
        HeadTransforms.Positions at = transforms.isIdentity() ? null
                : transforms.at(positions(null, perChunk, lq), perChunk, lq);
        // Each worker's views of its buffers serve all its chunks of the same size: a call's
        // allocation grows with its threads, not with its batch.
        ChunkViews[] views = new ChunkViews[Parallel.workers(threads, chunks)];
        Parallel.forEach(threads, chunks, (c, worker) -> {
            int b0 = c * perChunk;
            int n = Math.min(batch, b0 + perChunk) - b0;
            float[] buf = Scratch.get(Scratch.PROJECTED, n * lq * width);
            float[] attended = Scratch.get(Scratch.ATTENDED, n * lq * qWidth);
            ChunkViews v = views[worker];
            if (v == null || v.q.data() != buf || v.attended.data() != attended || v.q.batch() != n) {
                views[worker] = v = new ChunkViews(
                        HeadLayout.tokenMajor(buf, 0, n, lq, numHeads, headDim, width),
                        HeadLayout.tokenMajor(buf, qWidth, n, lq, kvHeads, headDim, width),
                        HeadLayout.tokenMajor(buf, qWidth + kvWidth, n, lq, kvHeads, headDim, width),
                        HeadLayout.tokenMajor(attended, 0, n, lq, numHeads, headDim, qWidth),
                        out.rowsOf(attended, n * lq));
            }
            projectSelf(input, b0 * lq, n * lq, buf, width, 1);
            if (at != null) {
                transforms.applyToQueries(v.q, at);
                transforms.applyToKeys(v.k, at);
            }
            attend.run(v.q, v.k, v.v, v.attended, b0, 1);
            out.applyInto(v.outInput, 0, n * lq, y, b0 * lq * embedDim, embedDim, 1);
        });
        if (target == null) {
            return Tensor.of(y, batch, lq, embedDim);
        }
        Outputs.publish(target, y);
        return target;
    }

    /**
     * One chunk in a worker's buffers: the heads of q, k and v side by side, the attention's
     * output, and the same output as the rows the output projection reads.
     */
    private record ChunkViews(HeadLayout q, HeadLayout k, HeadLayout v, HeadLayout attended, MatrixView outInput) {
    }

    /**
     * Rows {@code [firstRow, firstRow + rows)} of {@code x} through the self-attention
     * projections, q | k | v side by side in {@code buf} from its row 0.
     */
    private void projectSelf(MatrixView x, int firstRow, int rows, float[] buf, int width, int threads) {
        int column = 0;
        for (Projection p : selfProjections) {
            p.applyInto(x, firstRow, rows, buf, column, width, threads);
            column += p.outFeatures;
        }
    }

    /** Positions {@code [batch][length]}: {@code start[b] + t}, or {@code t} when {@code start} is null. */
    private static int[][] positions(int[] start, int batch, int length) {
        int[][] positions = new int[batch][length];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                positions[b][t] = (start == null ? 0 : start[b]) + t;
            }
        }
        return positions;
    }
}
