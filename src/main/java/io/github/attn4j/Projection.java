package io.github.attn4j;

import io.github.attn4j.internal.kernel.Gemm;
import io.github.attn4j.internal.kernel.MatrixView;
import io.github.attn4j.internal.kernel.PackedMatrix;

import java.util.Arrays;

/**
 * An {@code nn.Linear} layer {@code y = x·Wᵀ + b} whose weight is packed for the GEMM kernel once,
 * at construction, and reused by every call. The packed copy is the only copy of the weight it
 * keeps: the caller's array is read once and not retained.
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

    /** {@code weight} is {@code (out, in)} row-major, read once; {@code bias} is {@code (out)} or null, copied. */
    static Projection of(float[] weight, float[] bias, int outFeatures, int inFeatures) {
        return new Projection(Gemm.pack(transposed(weight, outFeatures, inFeatures)), bias == null ? null : bias.clone());
    }

    /**
     * One projection whose output features are those of the parts, in order: part i has weight
     * {@code weights[i]} {@code (outFeatures[i], in)} and bias {@code biases[i]} (null: none).
     * Packed as one matrix with no stacked copy, so every part but the last must have a multiple
     * of {@link PackedMatrix#panelWidth()} outputs; {@link #columns} then gives each part back.
     */
    static Projection stacked(int inFeatures, float[][] weights, float[][] biases, int... outFeatures) {
        MatrixView[] parts = new MatrixView[weights.length];
        int total = 0;
        boolean hasBias = false;
        for (int i = 0; i < parts.length; i++) {
            parts[i] = transposed(weights[i], outFeatures[i], inFeatures);
            total += outFeatures[i];
            hasBias |= biases[i] != null;
        }
        float[] bias = hasBias ? new float[total] : null;
        for (int i = 0, at = 0; i < parts.length; at += outFeatures[i], i++) {
            if (biases[i] != null) {
                System.arraycopy(biases[i], 0, bias, at, outFeatures[i]);
            }
        }
        return new Projection(Gemm.packColumns(parts), bias);
    }

    /** Output features {@code [from, to)} as a projection of their own, sharing the packed weight. */
    Projection columns(int from, int to) {
        return new Projection(packed.columns(from, to), bias == null ? null : Arrays.copyOfRange(bias, from, to));
    }

    /** Applies the layer to {@code rows} rows of {@code x} into a new {@code rows x outFeatures} array of {@code size} floats (already checked). */
    float[] apply(float[] x, int rows, int size, int threads) {
        float[] y = new float[size];
        applyInto(x, rows, y, 0, outFeatures, threads);
        return y;
    }

    /**
     * Writes the layer's output for {@code rows} rows of {@code x} into columns
     * {@code [column, column + outFeatures)} of {@code y}, rows {@code ldc} floats apart, on up to
     * {@code threads} threads.
     */
    void applyInto(float[] x, int rows, float[] y, int column, int ldc, int threads) {
        if (rows == 0) {
            return;     // y may be empty, with no element at column
        }
        if (bias != null) {
            for (int r = 0; r < rows; r++) {
                System.arraycopy(bias, 0, y, column + r * ldc, outFeatures);
            }
        }
        Gemm.multiply(MatrixView.rowMajor(x, 0, rows, inFeatures, inFeatures), packed, y, column, ldc, bias != null,
                threads);
    }

    private static MatrixView transposed(float[] weight, int outFeatures, int inFeatures) {
        return MatrixView.rowMajor(weight, 0, outFeatures, inFeatures, inFeatures).transpose();
    }
}
