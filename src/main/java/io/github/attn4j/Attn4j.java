package io.github.attn4j;

import io.github.attn4j.internal.kernel.Kernels;

/** Which kernels this JVM runs, as chosen once when the first kernel runs (see the README's "Kernel paths"). */
public final class Attn4j {
    private Attn4j() {
    }

    /**
     * One line saying which kernels run and why, as logged at startup, for example
     * {@code "Vector API, 512-bit (16 float lanes), register block 12 x 2 vectors; preferred species"}.
     *
     * @return the description of the selected kernel path
     */
    public static String kernels() {
        return Kernels.describe();
    }

    /**
     * Vector width of the active kernels in bits: 128, 256 or 512 on the Vector API path, 0 on
     * the scalar path.
     *
     * @return the vector width in bits, 0 for the scalar kernels
     */
    public static int vectorBits() {
        return Kernels.vectorBits();
    }
}
