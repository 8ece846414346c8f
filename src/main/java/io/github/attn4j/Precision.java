package io.github.attn4j;

/**
 * How a {@link KvCache} stores its keys and values, and how a {@link MultiHeadAttention} stores
 * its projection weights ({@link MultiHeadAttentionBuilder#weightPrecision}: F32, F16 or BF16).
 * Attention always computes in float32: a narrower cache rounds each key and value once, when it
 * is appended, and widens a tile of them back to float32 each time the attention kernel reads it;
 * narrower weights are rounded once, when the module is built, and widened panel by panel as the
 * projections read them. The rounded values widen exactly, on every kernel path (scalar and
 * every vector width), so a cache or weights of a given precision give the same bits everywhere,
 * and (but for INT8 keys, see {@link #INT8}) the same bits as an F32 cache or F32 weights holding
 * the rounded values. A finite value a
 * 16-bit format cannot hold is rejected (see {@link #F16}) whether it is a key, a value or a
 * weight. INT8 is for caches only.
 *
 * <p>Decoding reads the whole cache once per step, so its time is mostly the bytes streamed from
 * memory: a narrower cache is faster and holds more tokens in the same memory.
 *
 * <p>Accuracy figures are the relative RMS error of the attention output against a
 * double-precision reference, Gaussian queries, keys and values, 4096 cached tokens, head width
 * 128 (the float32 kernel alone: about 1e-7).
 */
public enum Precision {
    /** IEEE binary32, 4 bytes per value: exact. */
    F32,
    /**
     * IEEE binary16 (half precision), 2 bytes per value: 11 significant bits, rounded to nearest
     * (ties to even, as {@link Float#floatToFloat16}); relative rounding error at most 2⁻¹¹ for
     * magnitudes from 6.1e-5 to 65504, absolute error at most 2⁻²⁵ below (subnormals). NaN and
     * the infinities are kept. A finite value that would round to infinity ({@code |x| >= 65520})
     * is <b>rejected</b>: the append throws an {@link IllegalArgumentException} and the cache is
     * left unchanged, rather than turning the value into an infinity or silently clamping it.
     * Attention output error: 3.0e-4.
     */
    F16,
    /**
     * bfloat16, 2 bytes per value: the upper half of the float32 bits, rounded to nearest (ties
     * to even), 8 significant bits and the float32 range; relative rounding error at most 2⁻⁸.
     * NaN stays NaN, the infinities are kept; a finite value that would round to infinity
     * ({@code |x| >= 3.3961776e38}) is rejected like F16's. Attention output error: 2.4e-3 to 2.5e-3.
     */
    BF16,
    /**
     * Symmetric 8-bit integers with one float32 scale per block of 32 consecutive values of a
     * key or value vector (as GGML's Q8_0): {@code x ≈ q · s}, {@code s = max|x| / 127} over the
     * block, {@code q = rint(x / s)} in [-127, 127]; 1.125 bytes per value. The error of a value
     * is at most {@code s / 2}, a quarter of a percent of the block's largest magnitude. A block
     * holding NaN or an infinity reads back as NaN throughout (its scale is NaN), so non-finite
     * inputs still give non-finite outputs. Attention output error: 7.7e-3 to 8.2e-3; with one
     * scale per vector of 128 it would be 9.0e-3, and twice as large when a few channels of the
     * keys are much larger than the rest (as in real models). Scores multiply each block's
     * partial dot product by its scale once ({@code Σ_blocks s · Σ q_i k_i}), instead of every
     * key value before its multiply-add, so they agree with an F32 cache holding {@code q · s}
     * within float rounding rather than bit for bit (a fifth less time in the key product);
     * values enter the output exactly as {@code q · s}. The bits are still the same on every
     * kernel path and thread count, whatever the chunks the keys were appended in. A block's partial sum of query
     * elements times bytes (at most 127 · 32 times the largest query element) overflows only
     * for queries beyond about 8e34 in magnitude.
     */
    INT8
}
