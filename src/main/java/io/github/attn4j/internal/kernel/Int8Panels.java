package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * Keys and values as symmetric 8-bit integers with one float scale per block of {@link #BLOCK}
 * consecutive elements of a key or value vector (as GGML's Q8_0), in the float32 panels' layout
 * ({@link EncodedPanels}): 1.125 bytes per element at the default block. A block is stored as
 * {@code s = max|x| / 127} and {@code q = rint(x / s)} in [-127, 127], and reads back as
 * {@code q · s}; a block holding NaN or an infinity has scale NaN, so it reads back as NaN.
 *
 * <p>Values enter the output as they read back. Scores apply each key block's scale once, to the
 * block's partial dot product ({@link DecodeOps#int8Keys}): a score is the sum over the key's
 * blocks of {@code s · (query · bytes)}, within float rounding of the dot product with the
 * values read back, not bit for bit. The scores of every tile of an INT8 source, whatever its
 * number of query rows, come from that product ({@link #stepScoreRows}), so a query row's scores
 * are the same whether its tile holds one row or many, as over the other storage types. Scaling
 * each byte before its multiply-add, as the values do, took the key product a fifth longer
 * (jmh/README.md, "INT8 keys: a scale per block, not per element").
 *
 * <p>Scales: key panel {@code p}'s block {@code k} keeps NR scales, one per key, at
 * {@code (p * keyBlocks + k) * NR}; value {@code j}'s block {@code k} at
 * {@code j * valueBlocks + k}. Why blocks of 32 and not one scale per vector: see {@link #BLOCK}.
 */
public final class Int8Panels extends EncodedPanels {
    /**
     * Elements per scale. One scale per (token, head) vector of 128 would store 1.03 bytes per
     * element instead of 1.125 (0.258x of float32 instead of 0.281x), but every scale then follows
     * the vector's largest element. Relative RMS error of the attention output, L = 4096,
     * d = 128, one decoding query on 16 heads (Int8BlockChoiceTest): Gaussian data 7.7e-3 with
     * blocks of 32 against 9.0e-3 per vector; keys with 4 outlier channels 16 times larger than
     * the rest (as real keys have), in two of the four blocks, 3.8e-2 against 7.1e-2. Decoding
     * costs the same either way: a multiplication per value element, a fused multiply-add per key
     * block.
     */
    public static final int BLOCK = 32;

    private final int block;
    private final int keyBlocks;
    private final int valueBlocks;
    private byte[] keyData;
    private byte[] valueData;
    private float[] keyScales;
    private float[] valueScales;
    /** One appended key or value, quantized block by block in column order before it moves to its panel slots. */
    private final byte[] quantized;

    /** Empty panels for keys of width {@code d}, values of width {@code dv}, room for {@code capacity} keys, blocks of {@link #BLOCK}. */
    public Int8Panels(int d, int dv, int capacity) {
        this(d, dv, capacity, BLOCK);
    }

    /**
     * Panels with blocks of {@code block} elements: a multiple of NR, or at least {@code dv} (one
     * block per value vector, so that a value panel never straddles two blocks).
     */
    Int8Panels(int d, int dv, int capacity, int block) {
        super(d, dv, Byte.BYTES, capacity);
        if (block <= 0 || block < dv && block % NR != 0) {
            throw new IllegalArgumentException("block: expected a multiple of NR = " + NR + " or at least dv = " + dv + ", got " + block);
        }
        this.block = block;
        this.keyBlocks = Math.max(1, (d + block - 1) / block);
        this.valueBlocks = Math.max(1, (dv + block - 1) / block);
        this.quantized = new byte[Math.max(d, dv)];
        allocate(capacity);
    }

    @Override
    void reallocate(int newCapacity) {
        byte[] newKeys = new byte[keyLength(newCapacity)];
        byte[] newValues = new byte[valueLength(newCapacity)];
        float[] newKeyScales = new float[Kernels.roundUp(newCapacity, NR) * keyBlocks];
        float[] newValueScales = new float[newCapacity * valueBlocks];
        copyHeld(keyData, newKeys, keyLength(keys));
        copyHeld(keyScales, newKeyScales, Kernels.roundUp(keys, NR) * keyBlocks);
        copyHeld(valueData, newValues, valueLength(keys));
        copyHeld(valueScales, newValueScales, keys * valueBlocks);
        keyData = newKeys;
        valueData = newValues;
        keyScales = newKeyScales;
        valueScales = newValueScales;
    }

    @Override
    void encodeKey(float[] x, int src, int j) {
        int at = keyIndex(j, 0);
        for (int k = 0; k < keyBlocks; k++) {
            int c0 = k * block;
            int c1 = Math.min(d, c0 + block);
            keyScales[(j / NR * keyBlocks + k) * NR + j % NR] = Kernels.DECODE.toInt8(x, src + c0, c1 - c0, quantized, c0);
        }
        for (int c = 0; c < d; c++) {
            keyData[at + c * NR] = quantized[c];
        }
    }

    @Override
    void encodeValue(float[] x, int src, int j) {
        for (int k = 0; k < valueBlocks; k++) {
            int c0 = k * block;
            int c1 = Math.min(dv, c0 + block);
            valueScales[j * valueBlocks + k] = Kernels.DECODE.toInt8(x, src + c0, c1 - c0, quantized, c0);
        }
        // A value row is contiguous within each panel of NR columns.
        for (int c0 = 0; c0 < dv; c0 += NR) {
            System.arraycopy(quantized, c0, valueData, valueIndex(j, c0), Math.min(NR, dv - c0));
        }
    }

    /** The scale of a block whose largest magnitude is {@code max}: {@code max / 127}, NaN when max is NaN or infinite. */
    static float scale(float max) {
        return Float.isFinite(max) ? max / 127f : Float.NaN;
    }

    /** {@code rint(x / s)} clamped to [-127, 127] (the quotient may pass 127 by a rounding), for a scale {@code s > 0}. */
    static byte quantize(float x, float s) {
        return (byte) Math.max(-127, Math.min(127, (int) Math.rint(x / s)));
    }

    @Override
    void decodeKeys(int p0, int panels, float[] dst) {
        for (int p = 0; p < panels; p++) {
            int from = keyIndex((p0 + p) * NR, 0);
            for (int k = 0; k < keyBlocks; k++) {
                int c0 = k * block;
                int rows = Math.min(d, c0 + block) - c0;
                Kernels.DECODE.int8Columns(keyData, from + c0 * NR, keyScales, ((p0 + p) * keyBlocks + k) * NR,
                        dst, p * NR * d + c0 * NR, rows);
            }
        }
    }

    @Override
    void decodeValues(int c0, int j0, int nk, float[] dst, int dOff) {
        Kernels.DECODE.int8Rows(valueData, valueIndex(j0, c0), valueScales, j0 * valueBlocks + c0 / block,
                valueBlocks, dst, dOff, nk);
    }

    @Override
    void keyProduct(float[] q, int qOff, int ldq, int rows, int p0, int panels, int lastNr, float[] s, int sOff, int lds,
                    boolean finite) {
        Kernels.DECODE.int8Keys(d, q, qOff, ldq, keyData, keyIndex(p0 * NR, 0), NR * d, panels, keyScales, p0 * keyBlocks * NR, keyBlocks * NR,
                block, s, sOff, lds, rows, lastNr);
    }

    @Override
    void valueProduct(float[] a, int aOff, int lda, int rows, int j0, int kc, float[] o, int oOff) {
        Kernels.DECODE.int8Values(kc, a, aOff, lda, valueData, valueIndex(j0, 0), VALUE_PANEL, dvPad / NR, valueScales, j0 * valueBlocks,
                valueBlocks, block, o, oOff, dvPad, rows);
    }

    /** Every tile, whatever its rows: the key product defines this source's scores. */
    @Override
    boolean stepScoreRows(int rows) {
        return true;
    }

    @Override
    boolean valueRowNonFinite(int j) {
        for (int k = 0; k < valueBlocks; k++) {
            if (Float.isNaN(valueScales[j * valueBlocks + k])) {
                return true;
            }
        }
        return false;
    }

    @Override
    long arrayBytes() {
        return keyData.length + valueData.length + 4L * (keyScales.length + valueScales.length);
    }
}
