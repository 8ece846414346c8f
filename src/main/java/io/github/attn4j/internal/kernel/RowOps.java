package io.github.attn4j.internal.kernel;

/**
 * The elementwise and reduction loops over one row of scores that softmax and the attention
 * tiles are built from. {@link Kernels#ROWS} is the implementation chosen at startup
 * ({@link VectorRowOps} or {@link ScalarRowOps}). Every method handles any {@code n >= 0} and
 * reduces in a fixed order, so a given path returns the same bits on every call.
 */
interface RowOps {
    /**
     * Replaces {@code x[off..off+n)} by {@code e^(x - shift)} ({@link ExpFloat#exp}) and returns
     * the sum of the new values.
     */
    float expShiftSum(float[] x, int off, int n, float shift);

    /** How many partial sums {@link #exp2ShiftAccumulateRows} keeps per row: the vector lanes, 1 for scalar. */
    int sumLanes();

    /**
     * On rows {@code r0 <= r < r1} of {@code n} elements, row r at {@code x[off + r * ld]}, as long
     * as each row's elements are at most {@code shifts[r] + bound} (NaN counts as within) and
     * {@code shifts[r]} is not {@code -Infinity}: replaces each element by {@code 2^(x - shifts[r])}
     * ({@link ExpFloat#exp2}) and adds each new value {@code x[off + r * ld + j]} to the partial sum
     * {@code sums[r * sumLanes() + j % sumLanes()]}. Returns the first row that is not within,
     * left as it was, or {@code r1} when every row was done. {@code bound} must be at most
     * {@link ExpFloat#EXP2_HI}, so no argument exceeds it, or {@code +Infinity} when the caller
     * knows that every element is at most its row's shift (a maximum just taken over the same
     * elements): then no row is checked.
     *
     * <p>The online softmax calls it once per tile with its lazy bound: a row whose maximum must
     * rise comes back to the caller instead of costing every row a separate pass and call
     * ({@link #anyAbove}). A row's partial sums stay apart across tiles and are added up once, in
     * index order, by the caller: no reduction across lanes per tile.
     */
    int exp2ShiftAccumulateRows(float[] x, int off, int ld, int n, int r0, int r1, float[] shifts, float bound,
                                float[] sums);

    /**
     * Whether any of {@code x[off..off+n)} is greater than {@code bound} (NaN is not). Cheaper
     * than {@link #max}: no NaN rules and no reduction across lanes.
     */
    boolean anyAbove(float[] x, int off, int n, float bound);


    /** Maximum of {@code x[off..off+n)}, NaN if one is NaN; {@code -Infinity} when {@code n == 0}. */
    float max(float[] x, int off, int n);

    /**
     * Maximum of the elements of {@code x[off..off+n)} that are not NaN, {@code +0} when it is a
     * zero of either sign, {@code -Infinity} when there is none. Cheaper than {@link #max}: a
     * compare and a blend per vector, no NaN rules; the online softmax takes a row's maximum with
     * it and falls back to {@link #max} only when it returns {@code -Infinity}.
     */
    float maxIgnoringNaN(float[] x, int off, int n);

    /** Multiplies {@code x[off..off+n)} by {@code factor}. */
    default void scale(float[] x, int off, int n, float factor) {
        scaleInto(x, off, n, factor, x, off);
    }

    /** {@code dst[dstOff + j] = x[off + j] * factor} for {@code j < n}; {@code dst} may be {@code x} at the same offset. */
    void scaleInto(float[] x, int off, int n, float factor, float[] dst, int dstOff);

    /**
     * {@code s[off + j] = fma(bias[at + j], factor, s[off + j])} for {@code j < n} (exactly
     * {@code s + bias} when {@code factor} is 1), except that a {@code -Infinity} bias always gives
     * {@code -Infinity} (even on a NaN score: a masked key stays masked).
     */
    void addBias(float[] s, int off, int n, float[] bias, int at, float factor);

    /** {@code x[off + j] += y[at + j]} for {@code j < n}: plain float additions, infinities and NaN as IEEE 754 says. */
    void add(float[] x, int off, int n, float[] y, int at);

    /**
     * {@code x[off + j] = cap · tanh(x[off + j])} ({@link ExpFloat#tanh}) for {@code j < n}: the
     * soft-cap, with the division by the cap already folded into the scores.
     */
    void softcap(float[] x, int off, int n, float cap);

    /**
     * {@code s[off + j] = fma(-slope, |center - j|, s[off + j])} for {@code j < n}: an ALiBi
     * distance bias, {@code center} being the query's position minus the first key's. Distances
     * are exact below 2^24.
     */
    void addDistanceBias(float[] s, int off, int n, float slope, int center);

    /** {@code s[off + j] = -Infinity} where {@code keep[at + j] == 0}, for {@code j < n}. */
    void mask(float[] s, int off, int n, float[] keep, int at);

    /** Whether any of {@code x[off..off+n)} is NaN or infinite. */
    boolean anyNonFinite(float[] x, int off, int n);

    /**
     * Copies {@code rows} lines of {@code n} floats, line r from {@code src[from + r * srcStride]}
     * to {@code dst[to + r * dstStride]} (not overlapping), and returns whether every value copied
     * is finite: {@link #anyNonFinite} in the same pass as the copy, decided once for all lines.
     */
    boolean copyFinite(float[] src, int from, int srcStride, float[] dst, int to, int dstStride, int rows, int n);

    /**
     * {@code dst[to + c * NR + t] = src[from + t * stride + c]} for {@code t < count},
     * {@code c < d} ({@link Kernels#NR}): {@code count <= NR} keys of width {@code d}, each a line
     * of the source, into consecutive columns of a key panel ({@link KeyValueSource#keyIndex}).
     * Copies exactly; {@code src} and {@code dst} must not overlap.
     */
    void transposeToPanel(float[] src, int from, int stride, int count, int d, float[] dst, int to);
}
