package io.github.attn4j.internal.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link RowOps#transposeToPanel} on 16 float lanes (the 512-bit species): each block of 16
 * lines by 16 columns is loaded as 16 vectors, transposed in registers and stored as 16 panel
 * rows. The transpose is four rounds of two-source lane selections ({@code selectFrom(a, b)},
 * one {@code vpermi2ps} or {@code vpermt2ps} on AVX-512). The round of bit m pairs vectors
 * {@code i} and {@code i + m} for every {@code i} with bit m clear: the first of the two becomes
 * the lanes of {@code a} and {@code b} whose index has bit m clear, the second those whose index
 * has it set, so bit m of the line index and bit m of the column index change places. After the
 * rounds of bits 8, 4, 2 and 1, element (line i, column j) sits in vector j, lane i. 64 selections
 * and 32 memory operations move 256 floats, where the scalar copy makes 512 memory operations:
 * about 0.15 against 0.45 to 0.6 ns per float on a Zen 5 core (jmh/README.md, "Keys transposed in
 * registers"). With 8 or 4 lanes a selection from two vectors is not one instruction everywhere
 * (AVX2 emulates it with two permutations and a blend: 0.34 against 0.39 ns per float), so
 * {@link VectorRowOps} takes this path with 16 lanes only.
 */
final class VectorTranspose {
    private static final VectorSpecies<Float> S = Vectors.SPECIES;
    private static final int NR = Kernels.NR;
    /** Whether the species has the 16 lanes this class is written for. */
    static final boolean AVAILABLE = Vectors.LANES == 16;

    private static final FloatVector LOW_8 = indices(8, false), HIGH_8 = indices(8, true);
    private static final FloatVector LOW_4 = indices(4, false), HIGH_4 = indices(4, true);
    private static final FloatVector LOW_2 = indices(2, false), HIGH_2 = indices(2, true);
    private static final FloatVector LOW_1 = indices(1, false), HIGH_1 = indices(1, true);

    private VectorTranspose() {
    }

    /**
     * Element (t, c) of the 16 x 16 block at {@code src[from + t * stride + c]} to
     * {@code dst[to + c * NR + t]}. Requires {@link #AVAILABLE}.
     */
    static void block(float[] src, int from, int stride, float[] dst, int to) {
        FloatVector r0 = FloatVector.fromArray(S, src, from);
        FloatVector r1 = FloatVector.fromArray(S, src, from + 1 * stride);
        FloatVector r2 = FloatVector.fromArray(S, src, from + 2 * stride);
        FloatVector r3 = FloatVector.fromArray(S, src, from + 3 * stride);
        FloatVector r4 = FloatVector.fromArray(S, src, from + 4 * stride);
        FloatVector r5 = FloatVector.fromArray(S, src, from + 5 * stride);
        FloatVector r6 = FloatVector.fromArray(S, src, from + 6 * stride);
        FloatVector r7 = FloatVector.fromArray(S, src, from + 7 * stride);
        FloatVector r8 = FloatVector.fromArray(S, src, from + 8 * stride);
        FloatVector r9 = FloatVector.fromArray(S, src, from + 9 * stride);
        FloatVector r10 = FloatVector.fromArray(S, src, from + 10 * stride);
        FloatVector r11 = FloatVector.fromArray(S, src, from + 11 * stride);
        FloatVector r12 = FloatVector.fromArray(S, src, from + 12 * stride);
        FloatVector r13 = FloatVector.fromArray(S, src, from + 13 * stride);
        FloatVector r14 = FloatVector.fromArray(S, src, from + 14 * stride);
        FloatVector r15 = FloatVector.fromArray(S, src, from + 15 * stride);
        FloatVector x;
        // Round 1, bit 8: vectors i and i + 8.
        x = r0; r0 = LOW_8.selectFrom(x, r8); r8 = HIGH_8.selectFrom(x, r8);
        x = r1; r1 = LOW_8.selectFrom(x, r9); r9 = HIGH_8.selectFrom(x, r9);
        x = r2; r2 = LOW_8.selectFrom(x, r10); r10 = HIGH_8.selectFrom(x, r10);
        x = r3; r3 = LOW_8.selectFrom(x, r11); r11 = HIGH_8.selectFrom(x, r11);
        x = r4; r4 = LOW_8.selectFrom(x, r12); r12 = HIGH_8.selectFrom(x, r12);
        x = r5; r5 = LOW_8.selectFrom(x, r13); r13 = HIGH_8.selectFrom(x, r13);
        x = r6; r6 = LOW_8.selectFrom(x, r14); r14 = HIGH_8.selectFrom(x, r14);
        x = r7; r7 = LOW_8.selectFrom(x, r15); r15 = HIGH_8.selectFrom(x, r15);
        // Round 2, bit 4: vectors i and i + 4.
        x = r0; r0 = LOW_4.selectFrom(x, r4); r4 = HIGH_4.selectFrom(x, r4);
        x = r1; r1 = LOW_4.selectFrom(x, r5); r5 = HIGH_4.selectFrom(x, r5);
        x = r2; r2 = LOW_4.selectFrom(x, r6); r6 = HIGH_4.selectFrom(x, r6);
        x = r3; r3 = LOW_4.selectFrom(x, r7); r7 = HIGH_4.selectFrom(x, r7);
        x = r8; r8 = LOW_4.selectFrom(x, r12); r12 = HIGH_4.selectFrom(x, r12);
        x = r9; r9 = LOW_4.selectFrom(x, r13); r13 = HIGH_4.selectFrom(x, r13);
        x = r10; r10 = LOW_4.selectFrom(x, r14); r14 = HIGH_4.selectFrom(x, r14);
        x = r11; r11 = LOW_4.selectFrom(x, r15); r15 = HIGH_4.selectFrom(x, r15);
        // Round 3, bit 2: vectors i and i + 2.
        x = r0; r0 = LOW_2.selectFrom(x, r2); r2 = HIGH_2.selectFrom(x, r2);
        x = r1; r1 = LOW_2.selectFrom(x, r3); r3 = HIGH_2.selectFrom(x, r3);
        x = r4; r4 = LOW_2.selectFrom(x, r6); r6 = HIGH_2.selectFrom(x, r6);
        x = r5; r5 = LOW_2.selectFrom(x, r7); r7 = HIGH_2.selectFrom(x, r7);
        x = r8; r8 = LOW_2.selectFrom(x, r10); r10 = HIGH_2.selectFrom(x, r10);
        x = r9; r9 = LOW_2.selectFrom(x, r11); r11 = HIGH_2.selectFrom(x, r11);
        x = r12; r12 = LOW_2.selectFrom(x, r14); r14 = HIGH_2.selectFrom(x, r14);
        x = r13; r13 = LOW_2.selectFrom(x, r15); r15 = HIGH_2.selectFrom(x, r15);
        // Round 4, bit 1: vectors i and i + 1.
        x = r0; r0 = LOW_1.selectFrom(x, r1); r1 = HIGH_1.selectFrom(x, r1);
        x = r2; r2 = LOW_1.selectFrom(x, r3); r3 = HIGH_1.selectFrom(x, r3);
        x = r4; r4 = LOW_1.selectFrom(x, r5); r5 = HIGH_1.selectFrom(x, r5);
        x = r6; r6 = LOW_1.selectFrom(x, r7); r7 = HIGH_1.selectFrom(x, r7);
        x = r8; r8 = LOW_1.selectFrom(x, r9); r9 = HIGH_1.selectFrom(x, r9);
        x = r10; r10 = LOW_1.selectFrom(x, r11); r11 = HIGH_1.selectFrom(x, r11);
        x = r12; r12 = LOW_1.selectFrom(x, r13); r13 = HIGH_1.selectFrom(x, r13);
        x = r14; r14 = LOW_1.selectFrom(x, r15); r15 = HIGH_1.selectFrom(x, r15);
        r0.intoArray(dst, to);
        r1.intoArray(dst, to + 1 * NR);
        r2.intoArray(dst, to + 2 * NR);
        r3.intoArray(dst, to + 3 * NR);
        r4.intoArray(dst, to + 4 * NR);
        r5.intoArray(dst, to + 5 * NR);
        r6.intoArray(dst, to + 6 * NR);
        r7.intoArray(dst, to + 7 * NR);
        r8.intoArray(dst, to + 8 * NR);
        r9.intoArray(dst, to + 9 * NR);
        r10.intoArray(dst, to + 10 * NR);
        r11.intoArray(dst, to + 11 * NR);
        r12.intoArray(dst, to + 12 * NR);
        r13.intoArray(dst, to + 13 * NR);
        r14.intoArray(dst, to + 14 * NR);
        r15.intoArray(dst, to + 15 * NR);
    }

    /**
     * The selection indices of the round of bit {@code m}, as a vector of the species (null when
     * it is not 16 lanes wide): lane l selects lane {@code l & ~m} ({@code high}: {@code l | m})
     * of the first vector when bit m of l is clear, and of the second (index + 16) when it is set.
     */
    private static FloatVector indices(int m, boolean high) {
        if (!AVAILABLE) {
            return null;
        }
        float[] index = new float[16];
        for (int l = 0; l < 16; l++) {
            int lane = high ? l | m : l & ~m;
            index[l] = (l & m) == 0 ? lane : 16 + lane;
        }
        return FloatVector.fromArray(S, index, 0);
    }
}
