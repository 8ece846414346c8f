package io.github.attn4j;

import io.github.attn4j.internal.kernel.Gemm;
import io.github.attn4j.internal.kernel.MatrixView;
import io.github.attn4j.internal.kernel.PackedMatrix;
import io.github.attn4j.internal.kernel.WeightRows;

import java.util.Arrays;

/**
 * An {@code nn.Linear} layer {@code y = x·Wᵀ + b} whose weight is packed for the GEMM kernel once,
 * at construction, and reused by every call. The packed copy is the only copy of the weight it
 * keeps: the caller's array or segment is read once and not retained. The packed weight holds
 * float32 or 16-bit values ({@link PackedMatrix.Format}); the bias stays float32.
 */
final class Projection {
    final int outFeatures;
    final int inFeatures;
    private final PackedMatrix packed;
    private final float[] bias;

    private Projection(PackedMatrix packed, float[] bias) {
        this.outFeatures = packed.cols();
        this.inFeatures = packed.rows();
        this.packed = packed;
        this.bias = bias;
    }

    /**
     * {@code weight} is {@code (out, in)}, read once and stored as {@code format}; {@code bias} is
     * {@code (out)} or null, copied.
     */
    static Projection of(WeightRows weight, float[] bias, PackedMatrix.Format format) {
        return new Projection(Gemm.packWeights(format, new WeightRows[]{weight}), bias == null ? null : bias.clone());
    }

    /**
     * One projection whose output features are those of the parts, in order: part i has weight
     * {@code weights[i]} {@code (out_i, in)} and bias {@code biases[i]} (null: none), stored as
     * {@code format}. Packed as one matrix with no stacked copy, so every part but the last must
     * have a multiple of {@link PackedMatrix#panelWidth()} outputs; {@link #columns} then gives
     * each part back.
     */
    static Projection stacked(WeightRows[] weights, float[][] biases, PackedMatrix.Format format) {
        int total = 0;
        boolean hasBias = false;
        for (int i = 0; i < weights.length; i++) {
            total += weights[i].rows();
            hasBias |= biases[i] != null;
        }
        float[] bias = hasBias ? new float[total] : null;
        for (int i = 0, at = 0; i < weights.length; at += weights[i].rows(), i++) {
            if (biases[i] != null) {
                System.arraycopy(biases[i], 0, bias, at, weights[i].rows());
            }
        }
        return new Projection(Gemm.packWeights(format, weights), bias);
    }

    /** Output features {@code [from, to)} as a projection of their own, sharing the packed weight. */
    Projection columns(int from, int to) {
        return new Projection(packed.columns(from, to), bias == null ? null : Arrays.copyOfRange(bias, from, to));
    }

    /** Applies the layer to {@code rows} rows of {@code x} into a new {@code rows x outFeatures} array of {@code size} floats (already checked). */
    float[] apply(float[] x, int rows, int size, int threads) {
        float[] y = new float[size];
        applyInto(x, 0, rows, y, 0, outFeatures, threads);
        return y;
    }

    /**
     * Writes the layer's output for rows {@code [firstRow, firstRow + rows)} of {@code x} into
     * {@code y}, row {@code firstRow + r} at {@code y[yOffset + r * ldc]} onwards ({@code
     * outFeatures} floats), on up to {@code threads} threads. Each row's result does not depend on
     * which other rows are in the call.
     */
    void applyInto(float[] x, int firstRow, int rows, float[] y, int yOffset, int ldc, int threads) {
        applyInto(rowsOf(x, firstRow + rows), firstRow, rows, y, yOffset, ldc, threads);
    }

    /**
     * The first {@code rows} rows of {@code x} as this layer's input, for {@link #applyInto(MatrixView,
     * int, int, float[], int, int, int)}: one view serves every row range of a call.
     */
    MatrixView rowsOf(float[] x, int rows) {
        return MatrixView.rowMajor(x, 0, rows, inFeatures, inFeatures);
    }

    /** {@link #applyInto(float[], int, int, float[], int, int, int)} for rows of a view from {@link #rowsOf}. */
    void applyInto(MatrixView x, int firstRow, int rows, float[] y, int yOffset, int ldc, int threads) {
        if (rows == 0) {
            return;     // y may be empty, with no element at yOffset
        }
        Gemm.multiply(x, firstRow, rows, packed, bias, y, yOffset, ldc, threads);
    }
}
