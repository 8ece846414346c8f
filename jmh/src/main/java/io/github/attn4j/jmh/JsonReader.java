package io.github.attn4j.jmh;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON parser for JMH's result files ({@code -rf json}), so that the grid report needs
 * no JSON library: objects become {@link LinkedHashMap}s (keys in file order), arrays
 * {@link List}s, numbers {@link Double}s (JMH writes {@code "NaN"} and infinities as strings,
 * which stay strings), and {@code true}, {@code false} and {@code null} themselves.
 */
final class JsonReader {
    private final String text;
    private int at;

    private JsonReader(String text) {
        this.text = text;
    }

    /**
     * The value {@code text} holds.
     *
     * @throws IllegalArgumentException naming the offset of the first character that is not valid JSON
     */
    static Object parse(String text) {
        JsonReader r = new JsonReader(text);
        Object value = r.value();
        r.skipSpace();
        if (r.at != text.length()) {
            throw r.error("the end of the document");
        }
        return value;
    }

    private Object value() {
        skipSpace();
        if (at >= text.length()) {
            throw error("a value");
        }
        char c = text.charAt(at);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> number();
        };
    }

    private Map<String, Object> object() {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        skipSpace();
        if (peek('}')) {
            return map;
        }
        do {
            skipSpace();
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("a string key");
            }
            String key = string();
            skipSpace();
            expect(':');
            map.put(key, value());
            skipSpace();
        } while (peek(','));
        expect('}');
        return map;
    }

    private List<Object> array() {
        List<Object> list = new ArrayList<>();
        at++;
        skipSpace();
        if (peek(']')) {
            return list;
        }
        do {
            list.add(value());
            skipSpace();
        } while (peek(','));
        expect(']');
        return list;
    }

    private String string() {
        StringBuilder sb = new StringBuilder();
        at++;
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (at >= text.length()) {
                break;
            }
            char e = text.charAt(at++);
            switch (e) {
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw error("four hex digits");
                    }
                    sb.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> sb.append(e);     // \" \\ \/
            }
        }
        throw error("a closing quote");
    }

    private Double number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        try {
            return Double.valueOf(text.substring(start, at));
        } catch (NumberFormatException e) {
            at = start;
            throw error("a value");
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error(word);
        }
        at += word.length();
        return value;
    }

    private boolean peek(char c) {
        if (at < text.length() && text.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        skipSpace();
        if (!peek(c)) {
            throw error("'" + c + "'");
        }
    }

    private void skipSpace() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    private IllegalArgumentException error(String expected) {
        String got = at < text.length() ? "'" + text.charAt(at) + "'" : "the end of the document";
        return new IllegalArgumentException("json: expected " + expected + " at offset " + at + ", got " + got);
    }
}
