package io.github.attn4j.kernel;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;
class ProbeTest { @Test void lanes() { assertEquals(16, Probe.lanes()); System.out.println("java " + Runtime.version()); } }
