package io.github.attn4j.internal.kernel;

/**
 * {@link Gemm}'s packing buffers of one thread, grown on demand to the largest call so far and
 * reused across calls: the packed A block, the packed B block (when B is not prepacked) and the
 * float32 copy of a group of 16-bit B panels; and the description of the B block a
 * single-threaded product is reading.
 */
final class GemmWorkspace {
    private static final ThreadLocal<GemmWorkspace> CURRENT = ThreadLocal.withInitial(GemmWorkspace::new);

    private float[] a = new float[0];
    private float[] b = new float[0];
    /**
     * 16-bit B panels widened to float32: at most {@code KC x NB} floats, from index
     * {@link #WIDE_START} (a panel then starts a cache line where arrays are placed on lines).
     */
    private float[] wide = new float[0];
    static final int WIDE_START = CacheLines.pad(Float.BYTES);
    private final BlockOfB block = new BlockOfB();

    /** The calling thread's workspace. */
    static GemmWorkspace current() {
        return CURRENT.get();
    }

    /** This thread's block description, for a product no other thread reads. */
    BlockOfB block() {
        return block;
    }

    /** The widening buffer, with room for {@code size} floats from {@link #WIDE_START}. */
    float[] wide(int size) {
        if (wide.length < WIDE_START + size) {
            wide = new float[WIDE_START + size];
        }
        return wide;
    }

    float[] a(int size) {
        if (a.length < size) {
            a = new float[size];
        }
        return a;
    }

    float[] b(int size) {
        if (b.length < size) {
            b = new float[size];
        }
        return b;
    }
}
