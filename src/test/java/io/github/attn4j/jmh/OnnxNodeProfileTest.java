package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OrtException;
import io.github.attn4j.jmh.peer.OnnxModel;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

/** {@link OnnxNodeProfile}: parsing ONNX Runtime's profile format, medians, the table, and a real profiled run. */
class OnnxNodeProfileTest {
    /** Events as ONNX Runtime 1.29 writes them: one JSON object per line (shortened args). */
    private static final List<String> LINES = List.of(
            "[",
            "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :2,\"dur\" :3523,\"ts\" :13,\"ph\" : \"X\",\"name\" :\"session_initialization\",\"args\" : {}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :10,\"ts\" :20,\"ph\" : \"X\",\"name\" :\"q_node_kernel_time\",\"args\" : {\"output_type_shape\" : [{\"float\":[1,16,512]}],\"op_name\" : \"MatMul\",\"node_index\" : \"0\"}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :7,\"ts\" :21,\"ph\" : \"X\",\"name\" :\"q_node_fence_before\",\"args\" : {\"op_name\" : \"MatMul\"}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :50,\"ts\" :30,\"ph\" : \"X\",\"name\" :\"attention_node_kernel_time\",\"args\" : {\"op_name\" : \"MultiHeadAttention\"}},",
            "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :2,\"dur\" :100,\"ts\" :19,\"ph\" : \"X\",\"name\" :\"model_run\",\"args\" : {}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :30,\"ts\" :120,\"ph\" : \"X\",\"name\" :\"q_node_kernel_time\",\"args\" : {\"op_name\" : \"MatMul\"}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :70,\"ts\" :130,\"ph\" : \"X\",\"name\" :\"attention_node_kernel_time\",\"args\" : {\"op_name\" : \"MultiHeadAttention\"}},",
            "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :2,\"dur\" :300,\"ts\" :119,\"ph\" : \"X\",\"name\" :\"model_run\",\"args\" : {}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :20,\"ts\" :220,\"ph\" : \"X\",\"name\" :\"q_node_kernel_time\",\"args\" : {\"op_name\" : \"MatMul\"}},",
            "{\"cat\" : \"Node\",\"pid\" :1,\"tid\" :2,\"dur\" :60,\"ts\" :230,\"ph\" : \"X\",\"name\" :\"attention_node_kernel_time\",\"args\" : {\"op_name\" : \"MultiHeadAttention\"}},",
            "{\"cat\" : \"Session\",\"pid\" :1,\"tid\" :2,\"dur\" :200,\"ts\" :219,\"ph\" : \"X\",\"name\" :\"model_run\",\"args\" : {}}",
            "]");

    @Test
    void parsesRunsAndKernelTimesOnly() {
        OnnxNodeProfile.Profile p = OnnxNodeProfile.parse(LINES);
        assertEquals(List.of(100L, 300L, 200L), p.runs());
        assertEquals(List.of("q_node", "attention_node"), List.copyOf(p.nodes().keySet()));
        assertEquals("MatMul", p.nodes().get("q_node").op());
        assertEquals(List.of(10L, 30L, 20L), p.nodes().get("q_node").micros());
        assertEquals("MultiHeadAttention", p.nodes().get("attention_node").op());
        assertEquals(List.of(50L, 70L, 60L), p.nodes().get("attention_node").micros());
    }

    @Test
    void medianDropsWarmUpAndAveragesTheMiddlePair() {
        assertEquals(250.0, OnnxNodeProfile.median(List.of(100L, 300L, 200L), 1));
        assertEquals(2.5, OnnxNodeProfile.median(List.of(9L, 4L, 1L, 3L, 2L), 1));
        assertEquals(3.0, OnnxNodeProfile.median(List.of(3L), 0));
        assertThrows(IllegalArgumentException.class, () -> OnnxNodeProfile.median(List.of(1L, 2L), 2));
    }

    @Test
    void tableShowsMediansSharesAndRates() {
        String table = OnnxNodeProfile.table(OnnxNodeProfile.parse(LINES), 8, 16, "none", 1, 1);
        // model_run after the first: 300, 200 -> 250 us. q_node: 30, 20 -> 25 us, 10% of the run;
        // 2·16·512·512 = 8,388,608 flops in 25 us = 335.5 GFLOP/s. attention: 70, 60 -> 65 us, 26%;
        // 4·16²·512 = 524,288 flops in 65 us = 8.1 GFLOP/s.
        assertTrue(table.startsWith("L=16 H=8 E=512 mask=none threads=1: model_run median 0.250 ms over 2 runs (1 warm-up runs dropped)"), table);
        assertTrue(table.contains("q_node           MatMul                    0.025   10.0%    335.5"), table);
        assertTrue(table.contains("attention_node   MultiHeadAttention        0.065   26.0%      8.1"), table);
    }

    @Test
    void profilesEveryNodeOfTheModel() throws OrtException, IOException {
        OnnxNodeProfile.Profile none = OnnxNodeProfile.profile(2, 16, OnnxModel.Mask.NONE, 1, 8);
        assertEquals(8, none.runs().size());
        // Three projection MatMuls, the attention op and the output MatMul, in whatever order the session ran them.
        assertEquals(List.of("MatMul", "MatMul", "MatMul", "MatMul", "MultiHeadAttention"),
                none.nodes().values().stream().map(OnnxNodeProfile.Node::op).sorted().toList());
        for (OnnxNodeProfile.Node node : none.nodes().values()) {
            assertEquals(8, node.micros().size(), node.op());
        }
        OnnxNodeProfile.Profile causal = OnnxNodeProfile.profile(2, 16, OnnxModel.Mask.CAUSAL, 1, 4);
        assertTrue(causal.nodes().values().stream().anyMatch(n -> n.op().equals("GroupQueryAttention")),
                causal.nodes().toString());
    }
}
