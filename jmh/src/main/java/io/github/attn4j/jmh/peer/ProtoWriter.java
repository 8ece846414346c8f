package io.github.attn4j.jmh.peer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The writing half of the Protocol Buffers wire format, as much of it as an ONNX model needs:
 * every field is a tag {@code (number << 3) | wireType} followed by a varint (wire type 0), a
 * little-endian 32-bit value (wire type 5) or a varint length and that many bytes (wire type 2:
 * strings, bytes, nested messages and packed repeated numbers). Fields are written in call order.
 */
public final class ProtoWriter {
    private static final int VARINT = 0;
    private static final int LENGTH_DELIMITED = 2;
    private static final int FIXED32 = 5;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** An integer field (int32, int64 or enum): negative values take ten bytes, as protobuf's int64 does. */
    public ProtoWriter varint(int field, long value) {
        tag(field, VARINT);
        rawVarint(value);
        return this;
    }

    /** A {@code float} field. */
    public ProtoWriter fixed32(int field, float value) {
        tag(field, FIXED32);
        int bits = Float.floatToRawIntBits(value);
        for (int shift = 0; shift < 32; shift += 8) {
            out.write(bits >>> shift);
        }
        return this;
    }

    /** A {@code bytes} field. */
    public ProtoWriter bytes(int field, byte[] value) {
        tag(field, LENGTH_DELIMITED);
        rawVarint(value.length);
        out.writeBytes(value);
        return this;
    }

    /** A {@code string} field, UTF-8. */
    public ProtoWriter string(int field, String value) {
        return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    /** An embedded message field. */
    public ProtoWriter message(int field, ProtoWriter message) {
        return bytes(field, message.toByteArray());
    }

    /** A packed repeated integer field (the proto3 default encoding of {@code repeated int64}). */
    public ProtoWriter packedVarints(int field, long... values) {
        ProtoWriter payload = new ProtoWriter();
        for (long v : values) {
            payload.rawVarint(v);
        }
        return bytes(field, payload.toByteArray());
    }

    /** The encoded message. */
    public byte[] toByteArray() {
        return out.toByteArray();
    }

    private void tag(int field, int wireType) {
        rawVarint(((long) field << 3) | wireType);
    }

    /** Seven bits per byte, least significant group first, high bit set on all but the last byte. */
    private void rawVarint(long value) {
        long v = value;
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }
}
