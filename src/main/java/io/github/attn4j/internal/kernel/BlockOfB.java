package io.github.attn4j.internal.kernel;

/**
 * One packed block of B: rows {@code [pc, pc + kc)} and the columns from {@code jc}, in
 * NR-column panels starting at index {@code offset} of {@code data}, or of {@code half}'s
 * 16-bit panels when {@code half} is not null (then {@code data} is null); {@code accumulate}
 * tells whether the product is added to C (always after the first K block), and {@code bias},
 * when not null (the first K block only), holds a value per column of B, from column 0, to add
 * to C after the product. Set before the product that reads it and not changed while it runs:
 * one thread reuses its own from block to block ({@link GemmWorkspace#block}), so a
 * single-threaded call allocates nothing; a block that helper threads read is a new one.
 */
final class BlockOfB {
    private float[] data;
    private PackedMatrix half;
    private int offset;
    private int pc;
    private int kc;
    private int jc;
    private boolean accumulate;
    private float[] bias;

    BlockOfB set(float[] data, PackedMatrix half, int offset, int pc, int kc, int jc, boolean accumulate, float[] bias) {
        this.data = data;
        this.half = half;
        this.offset = offset;
        this.pc = pc;
        this.kc = kc;
        this.jc = jc;
        this.accumulate = accumulate;
        this.bias = bias;
        return this;
    }

    float[] data() {
        return data;
    }

    PackedMatrix half() {
        return half;
    }

    int offset() {
        return offset;
    }

    int pc() {
        return pc;
    }

    int kc() {
        return kc;
    }

    int jc() {
        return jc;
    }

    boolean accumulate() {
        return accumulate;
    }

    float[] bias() {
        return bias;
    }
}
