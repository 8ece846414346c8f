package io.github.attn4j.jmh.peer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * An ONNX model of {@code nn.MultiheadAttention(E, H, batch_first=True)} self-attention, written
 * straight to the protobuf wire format ({@link ProtoWriter}), so the benchmarks need no ONNX or
 * protobuf library. The graph, with input {@code x (batch, length, E)} and output
 * {@code y (batch, length, E)}:
 * <pre>
 *   q = MatMul(x, Wqᵀ) [+ bq]   k = MatMul(x, Wkᵀ) [+ bk]   v = MatMul(x, Wvᵀ) [+ bv]
 *   o = attention(q, k, v)                                  H heads of width E/H, scale 1/√(E/H)
 *   y = MatMul(o, Woᵀ) [+ bo]
 * </pre>
 * {@code Wq}, {@code Wk}, {@code Wv} are the row blocks of PyTorch's {@code in_proj_weight}
 * {@code (3E, E)}, stored transposed as {@code (E, E)} initializers so that MatMul computes
 * {@code x·Wᵀ} as {@code nn.Linear} does; the bias Adds are left out when there are no biases.
 *
 * <p>The attention is the ONNX Runtime contrib op ({@code com.microsoft} domain) that ran fastest
 * on its CPU execution provider for each {@link Mask} (ONNX Runtime 1.29, H = 8, E = 512,
 * L = 2048 and 4096, one and two threads):
 * <ul>
 *   <li>{@code NONE}: {@code MultiHeadAttention} without a mask, which ONNX Runtime runs as its
 *       tiled flash attention;</li>
 *   <li>{@code CAUSAL}: {@code GroupQueryAttention} with as many key/value heads as query heads
 *       (that is, plain multi-head attention), which is always causal and computes only the
 *       lower triangle: about 1.6x faster than {@code MultiHeadAttention} with
 *       {@code unidirectional = 1}, which computes every score and then masks. Its graph inputs
 *       {@link #SEQLENS_K} (int32 {@code (batch)}, each {@code length - 1}) and
 *       {@link #TOTAL_SEQUENCE_LENGTH} (int32 scalar, {@code length}) say that every row is
 *       {@code length} tokens long with no past; its {@code present_key} and
 *       {@code present_value} outputs stay unused inside the graph (the op ran slower when they
 *       were left out);</li>
 *   <li>{@code PADDING}: {@code MultiHeadAttention} with its 2-D {@code key_padding_mask} input
 *       {@link #KEY_PADDING_MASK}, int32 {@code (batch, length)}, 1 for a key that takes part
 *       and 0 for a padded one (the 1-D key-length format and the {@code com.microsoft.Attention}
 *       op ran at the same speed). Padded keys get the op's {@code mask_filter_value} (-10000)
 *       before the softmax, which underflows to a zero weight.</li>
 * </ul>
 */
public final class OnnxModel {
    /** Name of the graph input holding {@code x}. */
    public static final String INPUT = "x";
    /** Name of the graph input holding the key padding mask ({@link Mask#PADDING} only). */
    public static final String KEY_PADDING_MASK = "key_padding_mask";
    /** Name of the int32 {@code (batch)} graph input of {@link Mask#CAUSAL}: index of each row's last key. */
    public static final String SEQLENS_K = "seqlens_k";
    /** Name of the int32 scalar graph input of {@link Mask#CAUSAL}: the number of keys. */
    public static final String TOTAL_SEQUENCE_LENGTH = "total_sequence_length";
    /** Name of the graph output. */
    public static final String OUTPUT = "y";

    /** How the model masks keys. */
    public enum Mask {
        NONE, CAUSAL, PADDING;

        /** {@code none}, {@code causal} or {@code padding}, the names the benchmarks use. */
        public static Mask of(String name) {
            return switch (name) {
                case "none" -> NONE;
                case "causal" -> CAUSAL;
                case "padding" -> PADDING;
                default -> throw new IllegalArgumentException("mask: expected none, causal or padding, got " + name);
            };
        }
    }

    // ONNX TensorProto.DataType values.
    private static final int FLOAT = 1;
    private static final int INT32 = 6;
    // ONNX AttributeProto.AttributeType.INT.
    private static final int ATTRIBUTE_INT = 2;
    private static final long IR_VERSION = 8;
    private static final long OPSET = 17;
    private static final String MS_DOMAIN = "com.microsoft";

    private OnnxModel() {
    }

    /**
     * The serialized model ({@code ModelProto}) for weights in PyTorch's state-dict layout.
     *
     * @param inProjWeight  {@code (3E, E)} row-major, rows q, k, v
     * @param inProjBias    {@code (3E)}, or null together with {@code outProjBias} for no bias
     * @param outProjWeight {@code (E, E)} row-major
     * @param outProjBias   {@code (E)} or null
     */
    public static byte[] multiHeadAttention(int embedDim, int numHeads, Mask mask, float[] inProjWeight,
                                            float[] inProjBias, float[] outProjWeight, float[] outProjBias) {
        Objects.requireNonNull(mask, "mask must not be null");
        if (embedDim <= 0 || numHeads <= 0 || embedDim % numHeads != 0) {
            throw new IllegalArgumentException("embedDim: expected a positive multiple of numHeads = " + numHeads
                    + ", got " + embedDim);
        }
        int e = embedDim;
        checkLength(inProjWeight, 3L * e * e, "inProjWeight");
        checkLength(outProjWeight, (long) e * e, "outProjWeight");
        if ((inProjBias == null) != (outProjBias == null)) {
            throw new IllegalArgumentException("inProjBias: expected null exactly when outProjBias is null, got "
                    + (inProjBias == null ? "null" : "an array"));
        }
        if (inProjBias != null) {
            checkLength(inProjBias, 3L * e, "inProjBias");
            checkLength(outProjBias, e, "outProjBias");
        }

        ProtoWriter graph = new ProtoWriter();
        String[] qkv = {"q", "k", "v"};
        for (int part = 0; part < 3; part++) {
            String w = "w" + qkv[part];
            graph.message(5, floatTensor(w, transpose(inProjWeight, part * e, e, e), e, e));
            if (inProjBias == null) {
                graph.message(1, node("MatMul", "", List.of(INPUT, w), qkv[part]));
            } else {
                String b = "b" + qkv[part];
                graph.message(5, floatTensor(b, Arrays.copyOfRange(inProjBias, part * e, (part + 1) * e), e));
                graph.message(1, node("MatMul", "", List.of(INPUT, w), qkv[part] + "_unbiased"));
                graph.message(1, node("Add", "", List.of(qkv[part] + "_unbiased", b), qkv[part]));
            }
        }
        graph.message(1, attention(mask, numHeads));
        graph.message(5, floatTensor("wo", transpose(outProjWeight, 0, e, e), e, e));
        if (outProjBias == null) {
            graph.message(1, node("MatMul", "", List.of("attention", "wo"), OUTPUT));
        } else {
            graph.message(5, floatTensor("bo", outProjBias, e));
            graph.message(1, node("MatMul", "", List.of("attention", "wo"), "projected"));
            graph.message(1, node("Add", "", List.of("projected", "bo"), OUTPUT));
        }
        graph.string(2, "multi_head_attention");
        graph.message(11, valueInfo(INPUT, FLOAT, "batch", "length", (long) e));
        switch (mask) {
            case NONE -> { }
            case CAUSAL -> {
                graph.message(11, valueInfo(SEQLENS_K, INT32, "batch"));
                graph.message(11, valueInfo(TOTAL_SEQUENCE_LENGTH, INT32));
            }
            case PADDING -> graph.message(11, valueInfo(KEY_PADDING_MASK, INT32, "batch", "length"));
        }
        graph.message(12, valueInfo(OUTPUT, FLOAT, "batch", "length", (long) e));
        return model(graph);
    }

    /**
     * The attention alone: graph inputs {@code q}, {@code k}, {@code v}, each
     * {@code (batch, length, width)}, into {@code com.microsoft.MultiHeadAttention} with
     * {@code numHeads} heads of width {@code width / numHeads}, unmasked, scale
     * {@code 1/√(width/numHeads)}, writing {@link #OUTPUT} {@code (batch, length, width)}.
     */
    public static byte[] attentionCore(int numHeads, int width) {
        if (numHeads <= 0 || width <= 0 || width % numHeads != 0) {
            throw new IllegalArgumentException("width: expected a positive multiple of numHeads = " + numHeads + ", got " + width);
        }
        ProtoWriter graph = new ProtoWriter();
        graph.message(1, node("MultiHeadAttention", MS_DOMAIN, List.of("q", "k", "v"), OUTPUT,
                intAttribute("num_heads", numHeads)));
        graph.string(2, "attention_core");
        for (String input : List.of("q", "k", "v")) {
            graph.message(11, valueInfo(input, FLOAT, "batch", "length", (long) width));
        }
        graph.message(12, valueInfo(OUTPUT, FLOAT, "batch", "length", (long) width));
        return model(graph);
    }

    private static byte[] model(ProtoWriter graph) {
        return new ProtoWriter()
                .varint(1, IR_VERSION)
                .string(2, "attn4j-jmh")
                .message(7, graph)
                .message(8, new ProtoWriter().string(1, "").varint(2, OPSET))
                .message(8, new ProtoWriter().string(1, MS_DOMAIN).varint(2, 1))
                .toByteArray();
    }

    /** The attention node for {@code mask}, reading q, k, v and writing {@code attention}. */
    private static ProtoWriter attention(Mask mask, int numHeads) {
        return switch (mask) {
            case NONE -> node("MultiHeadAttention", MS_DOMAIN, List.of("q", "k", "v"), "attention",
                    intAttribute("num_heads", numHeads));
            case PADDING -> node("MultiHeadAttention", MS_DOMAIN, List.of("q", "k", "v", "", KEY_PADDING_MASK), "attention",
                    intAttribute("num_heads", numHeads));
            case CAUSAL -> node("GroupQueryAttention", MS_DOMAIN,
                    List.of("q", "k", "v", "", "", SEQLENS_K, TOTAL_SEQUENCE_LENGTH),
                    List.of("attention", "present_key", "present_value"),
                    intAttribute("num_heads", numHeads), intAttribute("kv_num_heads", numHeads));
        };
    }

    private static ProtoWriter node(String opType, String domain, List<String> inputs, String output, ProtoWriter... attributes) {
        return node(opType, domain, inputs, List.of(output), attributes);
    }

    /**
     * NodeProto: input (1, "" for an omitted optional input), output (2), name (3), op_type (4),
     * attribute (5), domain (7, omitted for the default ONNX domain).
     */
    private static ProtoWriter node(String opType, String domain, List<String> inputs, List<String> outputs,
                                    ProtoWriter... attributes) {
        ProtoWriter node = new ProtoWriter();
        for (String input : inputs) {
            node.string(1, input);
        }
        for (String output : outputs) {
            node.string(2, output);
        }
        node.string(3, outputs.get(0) + "_node").string(4, opType);
        for (ProtoWriter attribute : attributes) {
            node.message(5, attribute);
        }
        if (!domain.isEmpty()) {
            node.string(7, domain);
        }
        return node;
    }

    /** AttributeProto: name (1), i (3), type (20). */
    private static ProtoWriter intAttribute(String name, long value) {
        return new ProtoWriter().string(1, name).varint(3, value).varint(20, ATTRIBUTE_INT);
    }

    /** TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian floats). */
    private static ProtoWriter floatTensor(String name, float[] data, long... dims) {
        ByteBuffer raw = ByteBuffer.allocate(4 * data.length).order(ByteOrder.LITTLE_ENDIAN);
        raw.asFloatBuffer().put(data);
        return new ProtoWriter().packedVarints(1, dims).varint(2, FLOAT).string(8, name).bytes(9, raw.array());
    }

    /**
     * ValueInfoProto {name (1), type (2)}, type = TypeProto {tensor_type (1)} = {elem_type (1),
     * shape (2)}; each TensorShapeProto dimension (1) is a dim_value (1, a Long) or a named
     * dim_param (2, a String).
     */
    private static ProtoWriter valueInfo(String name, int elementType, Object... dims) {
        ProtoWriter shape = new ProtoWriter();
        for (Object dim : dims) {
            ProtoWriter d = new ProtoWriter();
            if (dim instanceof Long size) {
                d.varint(1, size);
            } else {
                d.string(2, (String) dim);
            }
            shape.message(1, d);
        }
        ProtoWriter tensorType = new ProtoWriter().varint(1, elementType).message(2, shape);
        return new ProtoWriter().string(1, name).message(2, new ProtoWriter().message(1, tensorType));
    }

    /** The {@code cols x rows} transpose of the {@code rows x cols} block starting at row {@code firstRow}. */
    private static float[] transpose(float[] a, int firstRow, int rows, int cols) {
        float[] t = new float[rows * cols];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                t[c * rows + r] = a[(firstRow + r) * cols + c];
            }
        }
        return t;
    }

    private static void checkLength(float[] a, long expected, String name) {
        Objects.requireNonNull(a, name + " must not be null");
        if (a.length != expected) {
            throw new IllegalArgumentException(name + ": expected length " + expected + ", got " + a.length);
        }
    }
}
