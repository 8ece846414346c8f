package io.github.attn4j;

/**
 * A token embedding table {@code (vocabSize, dim)}, row {@code t} being the vector of token id
 * {@code t}, like PyTorch's {@code nn.Embedding} weight.
 */
public final class Embedding {
    private final float[] table;
    private final int vocabSize;
    private final int dim;

    private Embedding(float[] table, int vocabSize, int dim) {
        this.table = table;
        this.vocabSize = vocabSize;
        this.dim = dim;
    }

    /**
     * Wraps a row-major table of {@code vocabSize * dim} floats (no copy).
     *
     * @param table     row-major {@code (vocabSize, dim)} floats, used without a copy
     * @param vocabSize number of token ids (rows)
     * @param dim       width of each vector
     * @return the embedding
     * @throws IllegalArgumentException if a size is not positive or the table length differs
     */
    public static Embedding of(float[] table, int vocabSize, int dim) {
        Checks.notNull(table, "table");
        Checks.positive(vocabSize, "vocabSize");
        Checks.positive(dim, "dim");
        Checks.length(table, (long) vocabSize * dim, "table", "(vocabSize " + vocabSize + " x dim " + dim + ")");
        return new Embedding(table, vocabSize, dim);
    }

    /**
     * Vocabulary size.
     *
     * @return the number of token ids
     */
    public int vocabSize() {
        return vocabSize;
    }

    /**
     * Width of each embedding vector.
     *
     * @return the width of each vector
     */
    public int dim() {
        return dim;
    }

    /**
     * Looks up token ids {@code [B][L]} (rows of equal length, see {@link #pad}) and returns
     * {@code (B, L, dim)}.
     *
     * @param tokenIds token ids {@code [B][L]}, rows of equal length
     * @return the vectors {@code (B, L, dim)}, a new tensor
     * @throws IllegalArgumentException for ragged rows or ids outside {@code [0, vocabSize)}
     */
    public Tensor lookup(int[][] tokenIds) {
        Checks.notNull(tokenIds, "tokenIds");
        int batch = tokenIds.length;
        int length = 0;
        for (int b = 0; b < batch; b++) {
            Checks.notNull(tokenIds[b], "tokenIds[" + b + "]");
            length = tokenIds[0].length;
            if (tokenIds[b].length != length) {
                throw Checks.fail("tokenIds[" + b + "]",
                        "length " + length + " (rows must be padded to one length, see Embedding.pad)",
                        "length " + tokenIds[b].length);
            }
            for (int t = 0; t < length; t++) {
                int id = tokenIds[b][t];
                if (id < 0 || id >= vocabSize) {
                    throw new IllegalArgumentException("tokenIds[" + b + "][" + t + "]: expected an id in [0, "
                            + vocabSize + "), got " + id);
                }
            }
        }
        float[] out = new float[Checks.elementCount("lookup result (B, L, dim)", batch, length, dim)];
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < length; t++) {
                System.arraycopy(table, tokenIds[b][t] * dim, out, (b * length + t) * dim, dim);
            }
        }
        return Tensor.of(out, batch, length, dim);
    }

    /**
     * Pads ragged rows on the right with {@code padId} to the length of the longest row.
     *
     * @param ragged rows of token ids of any lengths
     * @param padId  the id appended to the shorter rows
     * @return new rows, all of the longest row's length
     */
    public static int[][] pad(int[][] ragged, int padId) {
        Checks.notNull(ragged, "ragged");
        int longest = 0;
        for (int b = 0; b < ragged.length; b++) {
            Checks.notNull(ragged[b], "ragged[" + b + "]");
            longest = Math.max(longest, ragged[b].length);
        }
        int[][] padded = new int[ragged.length][longest];
        for (int b = 0; b < ragged.length; b++) {
            System.arraycopy(ragged[b], 0, padded[b], 0, ragged[b].length);
            java.util.Arrays.fill(padded[b], ragged[b].length, longest, padId);
        }
        return padded;
    }
}
