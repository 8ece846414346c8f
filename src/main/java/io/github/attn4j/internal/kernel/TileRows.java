package io.github.attn4j.internal.kernel;

/**
 * Rows of a query tile of batch {@code b} (row {@code maskRow} of the mask: they differ when a call
 * covers some of the batch rows of its mask): row r is token {@code (i0 + r) / fold} of head
 * {@code hBase + (i0 + r) % fold}, so with {@code fold} heads of one group the rows run
 * token-major over those heads, and with {@code fold = 1} they are tokens of head hBase.
 * Mutable and reused ({@link #set}): each worker's {@link TileState} holds one, so a call does not
 * allocate one object per tile (a batch of 64 MiniLM sentences has 2304 tiles).
 */
final class TileRows {
    private int b;
    private int maskRow;
    private int hBase;
    private int fold;
    private int i0;
    private int rows;

    /** Makes this the tile of the given rows; returns {@code this}. */
    TileRows set(int b, int maskRow, int hBase, int fold, int i0, int rows) {
        this.b = b;
        this.maskRow = maskRow;
        this.hBase = hBase;
        this.fold = fold;
        this.i0 = i0;
        this.rows = rows;
        return this;
    }

    int b() {
        return b;
    }

    int maskRow() {
        return maskRow;
    }

    int hBase() {
        return hBase;
    }

    int fold() {
        return fold;
    }

    int i0() {
        return i0;
    }

    int rows() {
        return rows;
    }

    int token(int r) {
        return (i0 + r) / fold;
    }

    int head(int r) {
        return hBase + (i0 + r) % fold;
    }

    /** Whether the mask's key padding masks keys {@code [j0, j1)} for every head of this tile. */
    boolean allMasked(ScoreMask mask, int j0, int j1) {
        for (int r = 0; r < Math.min(rows, fold); r++) {
            if (!mask.masksAllKeys(maskRow, head(r), j0, j1)) {
                return false;
            }
        }
        return true;
    }

    /** Whether the mask's transforms change no score of this tile's heads for keys {@code [j0, j1)}. */
    boolean keepsAllKeys(ScoreMask mask, int j0, int j1) {
        for (int r = 0; r < Math.min(rows, fold); r++) {
            if (!mask.keepsAllKeys(maskRow, head(r), j0, j1)) {
                return false;
            }
        }
        return true;
    }

    /** The first key any row of the tile may attend. */
    int firstKey(ScoreMask mask) {
        int first = Integer.MAX_VALUE;
        for (int r = 0; r < rows; r++) {
            first = Math.min(first, mask.keyStart(maskRow, token(r)));
        }
        return first;
    }

    /** One past the last key any row of the tile may attend. */
    int endKey(ScoreMask mask, int keys) {
        int end = 0;
        for (int r = 0; r < rows; r++) {
            end = Math.max(end, mask.keyEnd(maskRow, token(r), keys));
        }
        return end;
    }
}
