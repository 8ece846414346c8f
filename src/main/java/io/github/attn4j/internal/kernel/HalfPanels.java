package io.github.attn4j.internal.kernel;

import static io.github.attn4j.internal.kernel.Kernels.NR;

/**
 * Keys and values as 16-bit floats, F16 (IEEE binary16) or BF16 (bfloat16), in the float32
 * panels' layout ({@link EncodedPanels}): half the bytes of {@link KeyValuePanels}, each row of
 * NR holding its columns in the order of {@link Packing#halfSlot}. Values are
 * rounded to nearest even on append ({@link HalfFloat}); a finite value that would round to
 * infinity is rejected before anything is appended.
 */
public final class HalfPanels extends EncodedPanels {
    private final boolean bf16;
    private short[] keyData;
    private short[] valueData;
    /** One appended key or value, rounded in column order before it moves to its panel slots. */
    private final short[] encoded;

    private HalfPanels(int d, int dv, int capacity, boolean bf16) {
        super(d, dv, Short.BYTES, capacity);
        this.bf16 = bf16;
        this.encoded = new short[Math.max(d, dv)];
        allocate(capacity);
    }

    /** Empty F16 panels for keys of width {@code d}, values of width {@code dv}, room for {@code capacity} keys. */
    public static HalfPanels f16(int d, int dv, int capacity) {
        return new HalfPanels(d, dv, capacity, false);
    }

    /** Empty BF16 panels for keys of width {@code d}, values of width {@code dv}, room for {@code capacity} keys. */
    public static HalfPanels bf16(int d, int dv, int capacity) {
        return new HalfPanels(d, dv, capacity, true);
    }

    @Override
    public void checkAppend(HeadLayout k, HeadLayout v, int b, int g, int count) {
        check(k, "k", b, g, count);
        check(v, "v", b, g, count);
    }

    private void check(HeadLayout layout, String name, int b, int g, int count) {
        float[] x = layout.data();
        for (int t = 0; t < count; t++) {
            int at = layout.at(b, t, g);
            if (!Kernels.DECODE.anyHalfOverflow(bf16, x, at, layout.width())) {
                continue;
            }
            for (int c = 0; c < layout.width(); c++) {
                if (bf16 ? HalfFloat.overflowsBf16(x[at + c]) : HalfFloat.overflowsF16(x[at + c])) {
                    throw new IllegalArgumentException(name + ": expected values " + (bf16
                            ? "BF16 can hold (finite |x| < 3.3961776e38, which rounds to at most 3.3895314e38)"
                            : "F16 can hold (finite |x| < 65520, which rounds to at most 65504; store larger values as BF16 or F32)")
                            + ", got " + x[at + c] + " at batch row " + b + ", kv head " + g + ", token " + t + ", element " + c);
                }
            }
        }
    }

    @Override
    void reallocate(int newCapacity) {
        short[] newKeys = new short[keyLength(newCapacity)];
        short[] newValues = new short[valueLength(newCapacity)];
        copyHeld(keyData, newKeys, keyLength(keys));
        copyHeld(valueData, newValues, valueLength(keys));
        keyData = newKeys;
        valueData = newValues;
    }

    @Override
    void encodeKey(float[] x, int src, int j) {
        int at = keyIndex(j, 0) - j % NR + Packing.halfSlot(j % NR);
        Kernels.DECODE.toHalf(bf16, x, src, d, encoded, 0);
        for (int c = 0; c < d; c++) {
            keyData[at + c * NR] = encoded[c];
        }
    }

    @Override
    void encodeValue(float[] x, int src, int j) {
        Kernels.DECODE.toHalf(bf16, x, src, dv, encoded, 0);
        // Panel by panel, the row's columns c0 + i at halfSlot(i), written out as two loops: the
        // first half at the even slots, the second at the odd ones. With Packing.halfSlot called
        // per value, appending a 4096-token BF16 prompt took twice as long (22 against 10 ms).
        int half = NR / 2;
        for (int c0 = 0; c0 < dv; c0 += NR) {
            int row = valueIndex(j, c0);
            int n = Math.min(NR, dv - c0);
            for (int i = 0; i < Math.min(n, half); i++) {
                valueData[row + 2 * i] = encoded[c0 + i];
            }
            for (int i = half; i < n; i++) {
                valueData[row + 2 * (i - half) + 1] = encoded[c0 + i];
            }
        }
    }

    /** Index of column {@code c} of value {@code j} ({@link #valueIndex}, in the row order of {@link Packing#halfSlot}). */
    private int valueAt(int j, int c) {
        return valueIndex(j, c) - c % NR + Packing.halfSlot(c % NR);
    }

    @Override
    void decodeKeys(int p0, int panels, float[] dst) {
        Kernels.DECODE.halfRows(bf16, keyData, keyIndex(p0 * NR, 0), dst, 0, panels * d);
    }

    @Override
    void decodeValues(int c0, int j0, int nk, float[] dst, int dOff) {
        Kernels.DECODE.halfRows(bf16, valueData, valueIndex(j0, c0), dst, dOff, nk);
    }

    @Override
    void keyProduct(float[] q, int qOff, int ldq, int rows, int p0, int panels, int lastNr, float[] s, int sOff, int lds,
                    boolean finite) {
        Kernels.DECODE.halfProduct(bf16, finite, d, q, qOff, ldq, keyData, keyIndex(p0 * NR, 0), NR * d, panels, s, sOff, lds, rows, lastNr, false);
    }

    @Override
    void valueProduct(float[] a, int aOff, int lda, int rows, int j0, int kc, float[] o, int oOff) {
        // Value tiles holding an infinity or NaN never come here (hasNonFiniteValues).
        Kernels.DECODE.halfProduct(bf16, true, kc, a, aOff, lda, valueData, valueIndex(j0, 0), VALUE_PANEL, dvPad / NR, o, oOff,
                dvPad, rows, NR, true);
    }

    @Override
    boolean valueRowNonFinite(int j) {
        int exponent = bf16 ? HalfFloat.F32_EXP >>> 16 : HalfFloat.F16_EXP;
        for (int c = 0; c < dv; c++) {
            if ((valueData[valueAt(j, c)] & exponent) == exponent) {
                return true;
            }
        }
        return false;
    }

    @Override
    long arrayBytes() {
        return 2L * (keyData.length + valueData.length);
    }
}
