package io.github.attn4j.jmh.peer;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * An ONNX Runtime session of an {@link OnnxModel} with its inputs and output bound once: the
 * float inputs ({@code x}, or {@code q}, {@code k} and {@code v} of the attention core) and the
 * mask's inputs live in direct buffers that ONNX Runtime reads in place, and the output is a pre-allocated ("pinned") tensor over a direct buffer that every
 * {@link #run} overwrites, so a run allocates no Java-side tensors. The session uses
 * {@code threads} intra-op threads, one inter-op thread, sequential execution and every graph
 * optimization ({@code ORT_ENABLE_ALL}).
 */
public final class OnnxAttentionSession implements AutoCloseable {
    /**
     * System property: when {@code true}, sessions made afterwards run with
     * {@code session.intra_op.allow_spinning = 0}, so their intra-op workers block instead of
     * spinning between runs. {@code SideBySide} sets it: with spinning, ONNX Runtime's workers
     * kept a core busy into the attn4j slice that followed (attn4j on two threads 15.0 against
     * 12.1 and 13.6 ms when paired with itself; 11.5 against 11.5 without spinning). JMH runs
     * leave it unset, ONNX Runtime's default.
     */
    public static final String NO_SPIN = "attn4j.ort.noSpin";

    private final OrtSession session;
    private final Map<String, OnnxTensor> inputs = new HashMap<>();
    private final Map<String, OnnxTensor> outputs;
    private final FloatBuffer output;

    /**
     * @param model      the serialized model ({@link OnnxModel#multiHeadAttention})
     * @param mask       the mask the model was built with
     * @param threads    intra-op threads
     * @param x          {@code (batch, length, embedDim)} row-major
     * @param paddedKeys {@code [batch][length]}, true for a padded key, for {@link OnnxModel.Mask#PADDING};
     *                   null for the other masks
     */
    public OnnxAttentionSession(byte[] model, OnnxModel.Mask mask, int threads, float[] x, int batch, int length,
                                int embedDim, boolean[][] paddedKeys) throws OrtException {
        this(model, mask, threads, x, batch, length, embedDim, paddedKeys, null);
    }

    /**
     * As the other constructor, with ONNX Runtime's profiler on when {@code profilePrefix} is not
     * null: every run's node timings go to a JSON file whose name starts with that prefix, written
     * by {@link #endProfiling}.
     */
    public OnnxAttentionSession(byte[] model, OnnxModel.Mask mask, int threads, float[] x, int batch, int length,
                                int embedDim, boolean[][] paddedKeys, String profilePrefix) throws OrtException {
        if ((mask == OnnxModel.Mask.PADDING) != (paddedKeys != null)) {
            throw new IllegalArgumentException("paddedKeys: expected flags exactly for mask PADDING, got "
                    + (paddedKeys == null ? "null" : "flags") + " for mask " + mask);
        }
        this(model, threads, profilePrefix, new String[]{OnnxModel.INPUT}, new float[][]{x}, batch, length, embedDim,
                mask, paddedKeys);
    }

    /**
     * A session of {@link OnnxModel#attentionCore}: inputs {@code q}, {@code k}, {@code v}, each
     * {@code (batch, length, width)} token-major (head h in columns {@code [h·hd, (h+1)·hd)}),
     * output of the same shape.
     */
    public static OnnxAttentionSession attentionCore(byte[] model, int threads, float[] q, float[] k, float[] v, int batch,
                                                     int length, int width) throws OrtException {
        return new OnnxAttentionSession(model, threads, null, new String[]{"q", "k", "v"}, new float[][]{q, k, v}, batch,
                length, width, OnnxModel.Mask.NONE, null);
    }

    /** Float inputs {@code names[i]} = {@code data[i]} and the output, all {@code (batch, length, width)}, plus the mask's inputs. */
    private OnnxAttentionSession(byte[] model, int threads, String profilePrefix, String[] names, float[][] data, int batch,
                                 int length, int width, OnnxModel.Mask mask, boolean[][] paddedKeys) throws OrtException {
        for (int i = 0; i < names.length; i++) {
            if ((long) batch * length * width != data[i].length) {
                throw new IllegalArgumentException(names[i] + ": expected length batch*length*width = "
                        + (long) batch * length * width + ", got " + data[i].length);
            }
        }
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(threads);
            options.setInterOpNumThreads(1);
            options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            if (profilePrefix != null) {
                options.enableProfiling(profilePrefix);
            }
            if (Boolean.getBoolean(NO_SPIN)) {
                options.addConfigEntry("session.intra_op.allow_spinning", "0");
            }
            session = env.createSession(model, options);
        }
        long[] shape = {batch, length, width};
        try {
            for (int i = 0; i < names.length; i++) {
                inputs.put(names[i], OnnxTensor.createTensor(env, directFloats(data[i].length).put(data[i]).flip(), shape));
            }
            switch (mask) {
                case NONE -> { }
                case CAUSAL -> {
                    IntBuffer lastKey = directInts(batch);
                    for (int b = 0; b < batch; b++) {
                        lastKey.put(length - 1);
                    }
                    inputs.put(OnnxModel.SEQLENS_K, OnnxTensor.createTensor(env, lastKey.flip(), new long[]{batch}));
                    inputs.put(OnnxModel.TOTAL_SEQUENCE_LENGTH, OnnxTensor.createTensor(env, directInts(1).put(length).flip(), new long[0]));
                }
                case PADDING -> inputs.put(OnnxModel.KEY_PADDING_MASK,
                        OnnxTensor.createTensor(env, keepFlags(paddedKeys, batch, length), new long[]{batch, length}));
            }
            output = directFloats(data[0].length);
            outputs = Map.of(OnnxModel.OUTPUT, OnnxTensor.createTensor(env, output, shape));
        } catch (OrtException | RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /** One {@code session.run}; returns the output buffer (the same buffer every time, overwritten). */
    public FloatBuffer run() throws OrtException {
        try (OrtSession.Result ignored = session.run(inputs, outputs)) {
            return output;
        }
    }

    /** Stops the profiler and returns the path of its JSON file (profiling sessions only). */
    public String endProfiling() throws OrtException {
        return session.endProfiling();
    }

    /** A copy of the output of the last {@link #run}. */
    public float[] output() {
        float[] y = new float[output.capacity()];
        output.get(0, y);
        return y;
    }

    @Override
    public void close() throws OrtException {
        for (OnnxTensor t : inputs.values()) {
            t.close();
        }
        if (outputs != null) {
            for (OnnxTensor t : outputs.values()) {
                t.close();
            }
        }
        session.close();
    }

    private static FloatBuffer directFloats(int n) {
        return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    private static IntBuffer directInts(int n) {
        return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    /** The op's 2-D key padding mask: int32 1 for a key that takes part, 0 for a padded one. */
    private static IntBuffer keepFlags(boolean[][] paddedKeys, int batch, int length) {
        if (paddedKeys.length != batch) {
            throw new IllegalArgumentException("paddedKeys: expected " + batch + " rows, got " + paddedKeys.length);
        }
        IntBuffer flags = directInts(batch * length);
        for (boolean[] row : paddedKeys) {
            if (row.length != length) {
                throw new IllegalArgumentException("paddedKeys: expected rows of length " + length + ", got " + row.length);
            }
            for (boolean padded : row) {
                flags.put(padded ? 0 : 1);
            }
        }
        return flags.flip();
    }
}
