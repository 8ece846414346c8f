package io.github.attn4j;

import io.github.attn4j.kernel.Gemm;
import io.github.attn4j.kernel.MatrixView;
import io.github.attn4j.kernel.PackedMatrix;

/**
 * An {@code nn.Linear} layer {@code y = x·Wᵀ + b} whose weight is copied and packed for the GEMM
 * kernel once, at construction, and reused by every call.
 */
final class Projection {
    final int outFeatures;
    final int inFeatures;
    private final float[] weight;
    private final float[] bias;
    private final PackedMatrix packed;

    /** {@code weight} is {@code (out, in)} row-major; {@code bias} is {@code (out)} or null. Both are copied. */
    Projection(float[] weight, float[] bias, int outFeatures, int inFeatures) {
        this.outFeatures = outFeatures;
        this.inFeatures = inFeatures;
        this.weight = weight.clone();
        this.bias = bias == null ? null : bias.clone();
        this.packed = Gemm.pack(MatrixView.rowMajor(this.weight, 0, outFeatures, inFeatures, inFeatures).transpose());
    }

    /** One projection whose output features are those of {@code parts}, in order (the fused Q/K/V projection). */
    static Projection stacked(Projection... parts) {
        int in = parts[0].inFeatures;
        int out = 0;
        boolean hasBias = false;
        for (Projection p : parts) {
            out += p.outFeatures;
            hasBias |= p.bias != null;
        }
        float[] w = new float[Checks.elementCount("stacked weights", out, in)];
        float[] b = hasBias ? new float[out] : null;
        int row = 0;
        for (Projection p : parts) {
            System.arraycopy(p.weight, 0, w, row * in, p.outFeatures * in);
            if (p.bias != null) {
                System.arraycopy(p.bias, 0, b, row, p.outFeatures);
            }
            row += p.outFeatures;
        }
        return new Projection(w, b, out, in);
    }

    /**
     * Applies the layer to {@code x}, rows of {@code inFeatures}, on up to {@code threads}
     * threads; {@code outputSize} is rows x outFeatures, already checked.
     */
    float[] apply(float[] x, int outputSize, int threads) {
        int rows = x.length / inFeatures;
        float[] y = new float[outputSize];
        if (bias != null) {
            for (int r = 0; r < rows; r++) {
                System.arraycopy(bias, 0, y, r * outFeatures, outFeatures);
            }
        }
        Gemm.multiply(MatrixView.rowMajor(x, 0, rows, inFeatures, inFeatures), packed, y, 0, outFeatures, bias != null,
                threads);
        return y;
    }
}
