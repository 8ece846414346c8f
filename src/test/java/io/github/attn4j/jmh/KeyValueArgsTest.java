package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

class KeyValueArgsTest {
    private static Map<String, String> defaults() {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("heads", "8");
        d.put("lengths", "128,512");
        return d;
    }

    @Test
    void overridesDefaultsAndKeepsTheirOrder() {
        Map<String, String> opt = KeyValueArgs.parse(new String[]{"lengths=2048", "heads=1,16"}, defaults());
        assertEquals(List.of("heads", "lengths"), List.copyOf(opt.keySet()));
        assertEquals("1,16", opt.get("heads"));
        assertEquals("2048", opt.get("lengths"));
        assertEquals("8", KeyValueArgs.parse(new String[0], defaults()).get("heads"));
    }

    @Test
    void valueMayContainEqualsSigns() {
        assertEquals("a=b", KeyValueArgs.parse(new String[]{"heads=a=b"}, defaults()).get("heads"));
    }

    @Test
    void rejectsUnknownKeysAndBareWords() {
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> KeyValueArgs.parse(new String[]{"head=8"}, defaults()));
        assertTrue(unknown.getMessage().contains("[heads, lengths]") && unknown.getMessage().contains("head=8"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KeyValueArgs.parse(new String[]{"heads"}, defaults()));
    }
}
