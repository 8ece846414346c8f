package io.github.attn4j.internal.kernel;

import java.util.Arrays;
import java.util.Objects;

/**
 * Single-precision matrix multiplication {@code C = A * B} (optionally {@code C += A * B}) in the
 * BLIS structure: five loops around a register-blocked {@link MicroKernel}, with A and B copied
 * into contiguous panels ({@link Packing}) so that the innermost loops stream through the caches
 * in order.
 *
 * <pre>
 * for jc in 0..N step NC              B block kc x nc  -> L3 (shared, 32 MiB)
 *   for pc in 0..K step KC            pack B[pc:pc+kc, jc:jc+nc] (or use the prepacked block)
 *     for ic in 0..M step MC          pack A[ic:ic+mc, pc:pc+kc] in MR-row micro-panels (row-major, or by depth)
 *       for jb in 0..nc step NB       group of B micro-panels kc x nb -> L2 (1 MiB per core)
 *         for ir in 0..mc step MR     A micro-panel MR x kc -> L1 (32 to 48 KiB per core)
 *           for jr in jb..jb+nb step NR   (one MicroKernel.blocks call)
 *             micro-kernel: C[MR x NR] += A panel * B panel, 2 * MR vector accumulators in registers
 * </pre>
 *
 * <p>Block sizes ({@link Blocking#DEFAULT}), for AMD Zen 4 and Zen 5 (L1d 32 and 48 KiB, L2 1 MiB
 * per core, 32 MiB shared L3): MR = 6 or 12 rows ({@link VectorMicroKernel}) by NR = 2 vectors (32
 * floats with 16 lanes) in the micro-kernel's registers; KC = 768, so a product of depth up to 768
 * (the projections of BERT-base, of E = 512 and of MiniLM) is one K block and writes C once,
 * instead of writing it, reading it back and writing it again from memory; MC = 132 and NB = 128,
 * so that the packed A block ({@code MC x KC}, 396 KiB) and the group of B micro-panels that it
 * sweeps ({@code KC x NB}, 384 KiB) are in L2 together, and an A micro-panel ({@code MR x KC},
 * 18 or 36 KiB) stays in L1 while it sweeps that group; NC = 2048 (a B block packed in the call,
 * {@code KC x NC}, 6 MiB, in L3). The measurements behind each size and the variants tried and
 * dropped are in {@code jmh/README.md} ("GEMM tuning", "One K block up to K = 768").
 *
 * <p>A task of at least {@link Blocking#depthColumns} columns packs A's micro-panels by depth
 * when the micro-kernel reads them so ({@link VectorDepthBlocks} says why); a narrower one reads a
 * unit-stride A in place ({@link #readsInPlace}), where a row-major copy would be the same rows
 * closer together: same bits either way.
 *
 * <p>Each output element is reduced in a fixed order (K blocks in increasing pc, each block
 * summed by one micro-kernel or decode-product call, in increasing p), whatever the blocking of
 * M and N. {@link #rowBlocks} computes any range of MC row blocks and columns for one packed B
 * block, so a parallel version can hand disjoint row blocks, or column slices of them, to
 * threads without changing any result bit; K is never split.
 *
 * <p>A prepacked B may hold 16-bit floats ({@link PackedMatrix.Format}): the macro-kernel widens
 * a group of its panels into a float32 buffer of the thread before the same micro-kernel reads
 * them, or, for a product of a few rows, a row loop widens them as it loads them (see
 * {@link MacroKernel}). Widening is exact and the reduction order the same, so the product
 * has the bits of the float32 product with the rounded values, on every thread count.
 *
 * <p>Working buffers are per thread (a {@link ThreadLocal} holding at most
 * {@code MC * KC + KC * NC} floats, 6.4 MiB, plus {@code KC * NB} floats, 384 KiB, for widened
 * 16-bit panels, sized to the largest call so far), so concurrent calls from several threads
 * are safe. C's elements must not overlap those read through {@code a} or {@code b}.
 */
public final class Gemm {
    private static final int MR = Kernels.MR;
    private static final int NR = Kernels.NR;

    /**
     * Work (multiply-adds, with {@link #FEW_ROWS}) below which a product is not split by columns,
     * neither when it has too few rows to share nor to even out its row blocks: handing tasks to
     * a pool thread costs microseconds when one is lingering and tens of them when it must be
     * woken. At 2^19 (against 2^22 before, with the prepacked tasks below) a one-token forward
     * on two threads at E = 896 (Qwen 2.5 0.5B's width) took 0.64 to 0.80x the time, at E = 512
     * 0.74 to 0.83x (jmh/README.md, "Decode projections on every thread").
     */
    private static final long MIN_SPLIT_WORK = 1L << 19;
    /**
     * Rows a product of fewer rows counts as in {@link #MIN_SPLIT_WORK}: such a product reads
     * every element of B for a handful of multiply-adds, and an element from L3 costs about as
     * much as eight (the projections of a decode step at E = 64, 655 thousand multiply-adds over
     * 2.6 MB of weights, took 35 µs on one Zen 5 core, 0.17 of the FMA ceiling). Counted by
     * their rows alone, those projections (393 and 262 thousand multiply-adds) stayed on one
     * thread; before pool threads lingered between short calls, splitting them made the steps
     * 1.05 to 1.15x slower (jmh/README.md, "Decode projections: B's bytes count").
     */
    private static final int FEW_ROWS = 8;
    /** Row strides (floats) that are multiples of this keep A packed: 4 KiB, the L1 set period. */
    private static final int IN_PLACE_ALIASING = 1024;

    private Gemm() {
    }

    /**
     * {@code C = A * B}, or {@code C += A * B} when {@code accumulate} is set, with C of shape
     * {@code a.rows() x b.cols()} stored row-major at {@code c[cOffset + i * ldc + j]}.
     *
     * @param a          left operand, {@code M x K}
     * @param b          right operand, {@code K x N}
     * @param c          output array; C's elements must not overlap those of {@code a} or {@code b}
     * @param cOffset    index of C(0, 0)
     * @param ldc        distance between rows of C, {@code >= N}
     * @param accumulate add to C's contents instead of overwriting them
     * @throws NullPointerException     if an array or view is null
     * @throws IllegalArgumentException if {@code a.cols() != b.rows()}, {@code ldc < N},
     *                                  {@code cOffset < 0} or C does not fit in {@code c}
     */
    public static void multiply(MatrixView a, MatrixView b, float[] c, int cOffset, int ldc, boolean accumulate) {
        Objects.requireNonNull(b, "b");
        GemmChecks.operands(a, b.rows(), b.cols(), c, cOffset, ldc);
        run(a, 0, a.rows(), b, null, c, cOffset, ldc, accumulate, null, Blocking.DEFAULT, 1);
    }

    /**
     * {@link #multiply(MatrixView, PackedMatrix, float[], int, int, boolean)} on up to
     * {@code threads} threads: row blocks of C (cut into column slices when they would not
     * come out even between the threads) are split between threads and the reduction
     * order of every element is the same as on one thread, so the result is bit-identical.
     *
     * @throws IllegalArgumentException also if {@code threads < 1}
     */
    public static void multiply(MatrixView a, PackedMatrix b, float[] c, int cOffset, int ldc, boolean accumulate,
                                int threads) {
        GemmChecks.rows(a, 0, Objects.requireNonNull(a, "a").rows(), b, null, c, cOffset, ldc, threads);
        run(a, 0, a.rows(), null, b, c, cOffset, ldc, accumulate, null, Blocking.DEFAULT, threads);
    }

    /**
     * {@code C = A * B + bias} for rows {@code [firstRow, firstRow + rows)} of {@code a} alone, on
     * up to {@code threads} threads as {@link #multiply(MatrixView, PackedMatrix, float[], int, int,
     * boolean, int)}: row {@code firstRow + i} of A gives row {@code i} of C, with the bits it gets
     * in a product over all of A, and {@code bias[j]} (when {@code bias} is not null) is added to
     * every element of column j once its first K block is summed: the bits of copying the bias
     * into every row of C and accumulating, without writing and reading C one more time. A
     * caller that runs many row ranges of one matrix (chunks of a batch) needs no view per range.
     *
     * @param bias a value per column of B, or null
     * @throws IllegalArgumentException also if the rows are not within {@code a} or {@code bias}
     *                                  has fewer than {@code b.cols()} elements
     */
    public static void multiply(MatrixView a, int firstRow, int rows, PackedMatrix b, float[] bias, float[] c,
                                int cOffset, int ldc, int threads) {
        GemmChecks.rows(a, firstRow, rows, b, bias, c, cOffset, ldc, threads);
        run(a, firstRow, rows, null, b, c, cOffset, ldc, false, bias, Blocking.DEFAULT, threads);
    }

    /**
     * Same as {@link #multiply(MatrixView, MatrixView, float[], int, int, boolean)} with B
     * already packed by {@link #pack(MatrixView)}: no copy of B is made during the call.
     *
     * @throws NullPointerException     if an array, view or {@code b} is null
     * @throws IllegalArgumentException as for the unpacked overload
     */
    public static void multiply(MatrixView a, PackedMatrix b, float[] c, int cOffset, int ldc, boolean accumulate) {
        Objects.requireNonNull(b, "b");
        GemmChecks.operands(a, b.rows(), b.cols(), c, cOffset, ldc);
        run(a, 0, a.rows(), null, b, c, cOffset, ldc, accumulate, null, Blocking.DEFAULT, 1);
    }

    /**
     * Packs {@code b} ({@code K x N}) once into the micro-kernel's panel layout for all its K
     * blocks. For an {@code nn.Linear} weight {@code W} stored {@code (out, in)} row-major, pass
     * {@code MatrixView.rowMajor(W, 0, out, in, in).transpose()} to get {@code B = W^T}.
     *
     * @param b the matrix to pack; its array is read now and not retained
     * @return an immutable packed copy, safe to share between threads
     * @throws NullPointerException     if {@code b} is null
     * @throws IllegalArgumentException if the packed copy would exceed the maximum array size
     */
    public static PackedMatrix pack(MatrixView b) {
        return pack(b, Blocking.DEFAULT);
    }

    static PackedMatrix pack(MatrixView b, Blocking blocking) {
        Objects.requireNonNull(b, "b");
        int kcMax = blocking.kc();
        checkPackedSize(b.rows(), b.cols());
        PackedMatrix packed = PackedMatrix.allocate(PackedMatrix.Format.F32, b.rows(), b.cols(), kcMax);
        for (int pc = 0; pc < b.rows(); pc += kcMax) {
            int kc = Math.min(kcMax, b.rows() - pc);
            Packing.packB(b, pc, kc, 0, b.cols(), packed.data(), packed.blockOffset(pc, kc, 0));
        }
        return packed;
    }

    /**
     * Packs {@code B = [w₀ᵀ | w₁ᵀ | ...]} for the {@code nn.Linear} weights {@code weights} (each
     * {@code (out, in)}, all {@code in} wide), with no stacked copy: for instance the Q, K and V
     * weights of a fused projection, or one weight alone. Every weight but the last must have a
     * multiple of {@link PackedMatrix#panelWidth()} rows, so that each one's columns of B are a
     * {@link PackedMatrix#columns(int, int)} view of the result. Each element is rounded once
     * to {@code format} (round to nearest even; exact for F32, and for a 16-bit source packed to
     * its own format), read a run of one row at a time: no float32 copy of a 16-bit weight is
     * made.
     *
     * @param format  how the packed elements are stored
     * @param weights the weights, side by side in this order
     * @return an immutable packed matrix, safe to share between threads
     * @throws NullPointerException     if an argument or weight is null
     * @throws IllegalArgumentException if there is no weight, the input widths differ, a weight
     *                                  but the last is not panel-aligned, the packed copy would
     *                                  exceed the maximum array size, or a finite value would
     *                                  round to an infinity in {@code format} (the message names
     *                                  the weight, row and column)
     */
    public static PackedMatrix packWeights(PackedMatrix.Format format, WeightRows[] weights) {
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(weights, "weights");
        if (weights.length == 0) {
            throw new IllegalArgumentException("weights: expected at least one matrix, got none");
        }
        int k = Objects.requireNonNull(weights[0], "weights[0]").cols();
        long n = 0;
        for (int i = 0; i < weights.length; i++) {
            WeightRows w = Objects.requireNonNull(weights[i], "weights[" + i + "]");
            if (w.cols() != k) {
                throw new IllegalArgumentException(w.name() + ": expected " + k + " input features (from "
                        + weights[0].name() + "), got " + w.cols());
            }
            if (i < weights.length - 1 && w.rows() % NR != 0) {
                throw new IllegalArgumentException(w.name() + ": expected a multiple of the panel width " + NR
                        + " output features (all weights but the last), got " + w.rows());
            }
            n += w.rows();
        }
        checkPackedSize(k, n);
        int kcMax = Blocking.DEFAULT.kc();
        PackedMatrix packed = PackedMatrix.allocate(format, k, (int) n, kcMax);
        float[] floats = packed.data();
        short[] halves = packed.half();
        float[] line = new float[Math.min(kcMax, k)];
        short[] scratch = new short[line.length];
        for (int pc = 0; pc < k; pc += kcMax) {
            int kc = Math.min(kcMax, k - pc);
            int jc = 0;
            for (WeightRows w : weights) {
                Packing.packWeightRows(w, pc, kc, format, floats, halves, packed.blockOffset(pc, kc, jc), line, scratch);
                jc += w.rows();
            }
        }
        return packed;
    }

    /** Checks the packed layout of a {@code k x n} matrix, and a pad, against the array size limit. */
    private static void checkPackedSize(int k, long n) {
        long size = n > Integer.MAX_VALUE ? Long.MAX_VALUE : PackedMatrix.packedSize(k, (int) n);
        long max = Integer.MAX_VALUE - 8 - CacheLines.LINE;
        if (size > max) {
            throw new IllegalArgumentException("b is too large to pack: needs " + size
                    + " elements (rows * cols rounded up to NR), at most " + max);
        }
    }

    /** The unpacked-B overload with explicit block sizes; checks arguments like the public one. */
    static void multiply(MatrixView a, MatrixView b, float[] c, int cOffset, int ldc, boolean accumulate,
                         Blocking blocking) {
        Objects.requireNonNull(b, "b");
        GemmChecks.operands(a, b.rows(), b.cols(), c, cOffset, ldc);
        run(a, 0, a.rows(), b, null, c, cOffset, ldc, accumulate, null, blocking, 1);
    }

    /**
     * The packed-B overload with explicit MC and NC; the K blocking is the one {@code b} was
     * packed with, whatever {@code blocking.kc()} says.
     */
    static void multiply(MatrixView a, PackedMatrix b, float[] c, int cOffset, int ldc, boolean accumulate,
                         Blocking blocking) {
        Objects.requireNonNull(b, "b");
        GemmChecks.operands(a, b.rows(), b.cols(), c, cOffset, ldc);
        run(a, 0, a.rows(), null, b, c, cOffset, ldc, accumulate, null, blocking, 1);
    }

    /**
     * The two outer loops: jc over NC-column blocks of B and C, pc over KC-deep blocks of the
     * reduction. Exactly one of {@code b} and {@code packed} is non-null; a prepacked block is
     * read in place (with the packed K blocking), otherwise the block is packed into this
     * thread's buffer. A {@code bias} (per column) goes with the first K block.
     */
    private static void run(MatrixView a, int aRow0, int m, MatrixView b, PackedMatrix packed, float[] c,
                            int cOffset, int ldc, boolean accumulate, float[] bias, Blocking blocking, int threads) {
        int n = packed != null ? packed.cols() : b.cols();
        int k = a.cols();
        if (m == 0 || n == 0) {
            return;
        }
        if (k == 0) {
            for (int i = 0; i < m; i++) {
                if (accumulate && bias != null) {
                    Kernels.ROWS.add(c, cOffset + i * ldc, n, bias, 0);
                } else if (bias != null) {
                    System.arraycopy(bias, 0, c, cOffset + i * ldc, n);
                } else if (!accumulate) {
                    Arrays.fill(c, cOffset + i * ldc, cOffset + i * ldc + n, 0f);
                }
            }
            return;
        }
        int kcMax = packed != null ? packed.kc() : blocking.kc();
        // With several threads, row blocks shrink so that every thread gets one.
        int mc = threads == 1 ? blocking.mc()
                : Math.min(blocking.mc(), Kernels.roundUp((m + threads - 1) / threads, MR));
        int aSize = Math.min(mc, m) * Math.min(kcMax, k);
        GemmWorkspace ws = GemmWorkspace.current();
        float[] bBuf = packed != null ? packed.data()
                : ws.b(Math.min(kcMax, k) * Kernels.roundUp(Math.min(blocking.nc(), n), NR));
        PackedMatrix half = packed != null && packed.format() != PackedMatrix.Format.F32 ? packed : null;
        int rowBlockCount = (m - 1) / mc + 1;
        // On several threads: tasks of one row block each, cut into column slices (one per thread)
        // when the row blocks have unequal rows or are too few to come out even, so the threads
        // finish together; or, with too few rows to share (a decode step's single token), tasks
        // of all row blocks over a slice of the column panels each. Not for products too small
        // to be worth more helpers.
        boolean worthSlices = (long) Math.max(m, FEW_ROWS) * n * k >= MIN_SPLIT_WORK;
        boolean splitColumns = rowBlockCount < threads && worthSlices;
        boolean uneven = rowBlockCount < 4 * threads && (m % mc != 0 || rowBlockCount % threads != 0) && worthSlices;
        int rowTasks = splitColumns ? 1 : rowBlockCount;
        for (int jc = 0; jc < n; jc += blocking.nc()) {
            int nc = Math.min(blocking.nc(), n - jc);
            int panels = (nc + NR - 1) / NR;
            int slices = splitColumns ? Math.min(panels, 4 * threads)
                    : uneven ? Math.max(1, Math.min(threads, panels / 2)) : 1;
            if (threads > 1 && packed != null) {
                // B packed beforehand (a module's weights): each task keeps its rows and columns
                // through every K block, so the threads meet once per column block, not once per
                // K block. Each element still takes the K blocks in order: the same bits.
                int jcBlock = jc;
                Parallel.forEach(threads, rowTasks * slices, (t, worker) -> {
                    int r = t / slices;
                    int slice = t % slices;
                    GemmWorkspace own = GemmWorkspace.current();
                    for (int pc = 0; pc < k; pc += kcMax) {
                        int kc = Math.min(kcMax, k - pc);
                        BlockOfB block = own.block().set(bBuf, half, packed.blockOffset(pc, kc, jcBlock), pc, kc, jcBlock,
                                accumulate || pc > 0, pc == 0 ? bias : null);
                        rowBlocks(a, aRow0, m, block, c, cOffset, ldc, mc, blocking.nb(), blocking.depthColumns(),
                                splitColumns ? 0 : r, splitColumns ? rowBlockCount : r + 1,
                                (int) ((long) panels * slice / slices) * NR,
                                Math.min(nc, (int) ((long) panels * (slice + 1) / slices) * NR), own.a(aSize));
                    }
                });
                continue;
            }
            for (int pc = 0; pc < k; pc += kcMax) {
                int kc = Math.min(kcMax, k - pc);
                int bOff = 0;
                if (packed != null) {
                    bOff = packed.blockOffset(pc, kc, jc);
                } else {
                    Packing.packB(b, pc, kc, jc, nc, bBuf, 0);
                }
                if (threads == 1) {
                    BlockOfB block = ws.block().set(bBuf, half, bOff, pc, kc, jc, accumulate || pc > 0, pc == 0 ? bias : null);
                    rowBlocks(a, aRow0, m, block, c, cOffset, ldc, mc, blocking.nb(), blocking.depthColumns(),
                            0, rowBlockCount, 0, nc, ws.a(aSize));
                    continue;
                }
                BlockOfB block = new BlockOfB().set(bBuf, half, bOff, pc, kc, jc, accumulate || pc > 0, pc == 0 ? bias : null);
                Parallel.forEach(threads, rowTasks * slices, (t, worker) -> {
                    int r = t / slices;
                    int slice = t % slices;
                    rowBlocks(a, aRow0, m, block, c, cOffset, ldc, mc, blocking.nb(), blocking.depthColumns(),
                            splitColumns ? 0 : r, splitColumns ? rowBlockCount : r + 1,
                            (int) ((long) panels * slice / slices) * NR,
                            Math.min(nc, (int) ((long) panels * (slice + 1) / slices) * NR),
                            GemmWorkspace.current().a(aSize));
                });
            }
        }
    }

    /**
     * The ic loop, for row blocks {@code [firstBlock, endBlock)} of the {@code m} rows of C (block
     * {@code r} covers rows {@code [r * mcMax, (r + 1) * mcMax)}, computed from rows {@code aRow0}
     * on of A) and block columns {@code [jFrom, jTo)}: packs the matching rows of A into {@code aBuf}
     * (see {@link Blocking#depthColumns}), or reads them in place ({@link #readsInPlace}), and runs
     * the macro-kernel in column groups of {@code nb}.
     * Distinct row-block or column ranges write disjoint parts of C and need their own
     * {@code aBuf}, so they may run on different threads once the B block is packed; every
     * element is still one micro-kernel call per K block, so the split changes no bit.
     */
    static void rowBlocks(MatrixView a, int aRow0, int m, BlockOfB block, float[] c, int cOffset, int ldc, int mcMax,
                          int nb, int depthColumns, int firstBlock, int endBlock, int jFrom, int jTo, float[] aBuf) {
        for (int r = firstBlock; r < endBlock; r++) {
            int ic = r * mcMax;
            int mc = Math.min(mcMax, m - ic);
            // By depth where every micro-panel takes the micro-kernel and the columns pay for the copy.
            int depthRows = mc > Kernels.MR && jTo - jFrom >= depthColumns ? Kernels.MICRO.depthRows() : 0;
            int cAt = cOffset + ic * ldc + block.jc();
            if (depthRows == 0 && readsInPlace(a)) {
                int aAt = a.offset() + (aRow0 + ic) * a.rowStride() + block.pc();
                MacroKernel.run(a.data(), aAt, a.rowStride(), block, mc, nb, jFrom, jTo, c, cAt, ldc, 0);
                continue;
            }
            Packing.packA(a, aRow0 + ic, mc, block.pc(), block.kc(), aBuf, depthRows, Kernels.MICRO.depthTailRows());
            MacroKernel.run(aBuf, 0, block.kc(), block, mc, nb, jFrom, jTo, c, cAt, ldc, depthRows);
        }
    }

    /**
     * Whether the micro-kernel reads A's rows where they are instead of a row-major copy: when
     * they are unit-stride runs (an activation, such as the attention's output before the output
     * projection), and not a multiple of 4 KiB apart. A row-major packed block has its rows
     * {@code kc} floats apart, and A's own rows {@code rowStride} apart are read the same way;
     * rows 4 KiB apart would put the twelve rows of a micro-panel in the same L1 sets, which the
     * packed copy avoids.
     */
    static boolean readsInPlace(MatrixView a) {
        return a.colStride() == 1 && a.rowStride() >= a.cols() && a.rowStride() % IN_PLACE_ALIASING != 0;
    }
}
