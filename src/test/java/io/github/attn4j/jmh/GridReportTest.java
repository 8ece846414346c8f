package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * The grid report: JMH's JSON read back ({@link JsonReader}, {@link GridResults}), and the tables,
 * chart and README part {@link GridReport} generates from it, checked against figures worked out
 * by hand from hand-written JMH results.
 */
class GridReportTest {
    /** Flops per vector FMA in these tests, as with 8 float lanes. */
    private static final double FLOPS_PER_FMA = 16;

    /** One JMH result as JMH writes it in {@code -rf json}, with a median and optionally {@code -prof gc}. */
    private static String result(String benchmark, int threads, String params, String unit, double median, double alloc) {
        String secondary = Double.isNaN(alloc) ? "{}" : String.format(Locale.ROOT,
                "{\"gc.alloc.rate\": {\"score\": 1.5, \"scoreUnit\": \"MB/sec\"}, "
                        + "\"gc.alloc.rate.norm\": {\"score\": %s, \"scoreError\": \"NaN\", "
                        + "\"scorePercentiles\": {\"0.0\": 1, \"50.0\": %s}, \"scoreUnit\": \"B/op\"}}", 2 * alloc + 7, alloc);
        return String.format(Locale.ROOT, """
                {"jmhVersion": "1.37", "benchmark": "io.github.attn4j.jmh.%s", "mode": "avgt", "threads": %d, "forks": 1,
                 "warmupIterations": 3, "warmupTime": "1 s", "measurementIterations": 5, "measurementTime": "1 s",
                 "jvmArgs": ["--add-modules=jdk.incubator.vector", "-Dx=\\"q\\\\u00e9\\""], "jdkVersion": "25.0.3",
                 "params": {%s},
                 "primaryMetric": {"score": %s, "scoreError": "NaN", "scoreConfidence": [1e-3, 2.5E+1],
                   "scorePercentiles": {"0.0": 0.5, "50.0": %s, "100.0": 1e9}, "scoreUnit": "%s", "rawData": [[1, 2]]},
                 "secondaryMetrics": %s}""", benchmark, threads, params, median + 1, median, unit, secondary);
    }

    private static String point(int batch, int length, int e, int h, String mask, int threads) {
        return String.format(Locale.ROOT, "\"batch\": \"%d\", \"seqLen\": \"%d\", \"embedDim\": \"%d\", \"numHeads\": \"%d\", "
                + "\"mask\": \"%s\", \"threads\": \"%d\"", batch, length, e, h, mask, threads);
    }

    /**
     * FMA 4 and 7 vector FMAs/ns (64 and 112 GFLOP/s at 16 flops each); at (1, 128, 512, 8) none on
     * one thread attn4j 10 ms, ONNX Runtime 12.5 ms; at (1, 512, 512, 8) none on two threads attn4j
     * 20 ms and no peer; the attention core at H = 8, hd = 64, L = 512 on one thread 8 ms, ONNX
     * Runtime's 10 ms.
     */
    private static String json() {
        return "[" + String.join(",\n",
                result("FmaPeakBenchmark.fma12", 1, "", "ops/ns", 4, 24),
                result("FmaPeakBenchmark.fma12", 2, "", "ops/ns", 7, 24),
                result("MultiHeadAttentionBenchmark.forward", 1, point(1, 128, 512, 8, "none", 1), "ms/op", 10, 262_144 + 30_000),
                result("MultiHeadAttentionBenchmark.forwardInto", 1, point(1, 128, 512, 8, "none", 1), "ms/op", 10.1, 1536),
                result("OnnxRuntimeAttentionBenchmark.run", 1, point(1, 128, 512, 8, "none", 1), "ms/op", 12.5, 700),
                result("MultiHeadAttentionBenchmark.forward", 1, point(1, 512, 512, 8, "none", 2), "ms/op", 20, Double.NaN),
                result("ScaledDotProductAttentionBenchmark.attention", 1,
                        "\"heads\": \"8\", \"headDim\": \"64\", \"seqLen\": \"512\", \"mask\": \"none\", \"threads\": \"1\"",
                        "ms/op", 8, 900),
                result("OnnxRuntimeAttentionCoreBenchmark.run", 1,
                        "\"heads\": \"8\", \"headDim\": \"64\", \"seqLen\": \"512\", \"threads\": \"1\"", "ms/op", 10, 300)) + "]";
    }

    @Test
    void jsonReaderReadsValuesAndReportsWhereItFails() {
        Object v = JsonReader.parse(" {\"a\": [1, -2.5e2, true, false, null, \"x\\\"\\u0041\\n\"], \"b\": {}, \"c\": []} ");
        Map<?, ?> m = (Map<?, ?>) v;
        assertEquals(List.of("a", "b", "c"), List.copyOf(m.keySet()));
        List<?> a = (List<?>) m.get("a");
        assertEquals(1.0, a.get(0));
        assertEquals(-250.0, a.get(1));
        assertEquals(Boolean.TRUE, a.get(2));
        assertEquals(Boolean.FALSE, a.get(3));
        assertNull(a.get(4));
        assertEquals("x\"A\n", a.get(5));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JsonReader.parse("{\"a\": 1,}"));
        assertEquals("json: expected a string key at offset 8, got '}'", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> JsonReader.parse("[1] 2"));
        assertThrows(IllegalArgumentException.class, () -> JsonReader.parse("\"open"));
        assertThrows(IllegalArgumentException.class, () -> JsonReader.parse("[tru]"));
    }

    @Test
    void resultsCarryMedianThreadsParamsAndAllocation() {
        List<GridResults.Result> results = GridResults.parse(json());
        assertEquals(8, results.size());
        GridResults.Result fma = results.get(1);
        assertEquals("FmaPeakBenchmark.fma12", fma.benchmark());
        assertEquals(2, fma.threads());
        assertEquals(7, fma.median(), "the 50.0 percentile, not the mean score");
        assertEquals("ops/ns", fma.unit());
        GridResults.Result mha = results.get(2);
        assertEquals(128, mha.intParam("seqLen"));
        assertEquals("none", mha.params().get("mask"));
        assertEquals(292_144, mha.allocBytes(), "the median iteration, not the mean");
        assertEquals("25.0.3", mha.jdk());
        assertEquals("1 fork, 3 warm-up and 5 measured iterations of 1 s", mha.settings());
        assertEquals("", mha.flags(), "no -XX: options among the fork's arguments");
        assertTrue(Double.isNaN(results.get(5).allocBytes()), "no -prof gc, no allocation figure");
        assertThrows(IllegalStateException.class, fma::millis);
        assertThrows(IllegalArgumentException.class, () -> GridResults.parse("{\"benchmark\": \"x\"}"));
    }

    @Test
    void tableHasRatioCeilingShareAndAllocationPerPoint() {
        List<GridResults.Result> results = GridResults.parse(json());
        assertEquals(64, GridReport.ceiling(results, 1, FLOPS_PER_FMA));
        assertEquals(112, GridReport.ceiling(results, 2, FLOPS_PER_FMA));
        assertTrue(Double.isNaN(GridReport.ceiling(results, 4, FLOPS_PER_FMA)));
        String md = GridReport.markdown(results, FLOPS_PER_FMA);
        assertTrue(md.startsWith("FMA ceiling (`FmaPeakBenchmark`, same run): 64.0 GFLOP/s on 1 thread; 112.0 GFLOP/s on 2 threads;"
                + " 16 flops per vector FMA, JDK 25.0.3. Each point: 1 fork, 3 warm-up and 5 measured iterations of 1 s."), md);
        // (1, 128, 512): 8·128·512² + 4·128²·512 = 301989888 flops; in 10 ms 30.2 GFLOP/s = 47% of 64,
        // in 12.5 ms 24.2 GFLOP/s = 38%. Allocation 292144 B = 285.3 KiB, 1536 B = 1.5 KiB.
        assertTrue(md.contains("| 1 | 128 | 512 | 8 | none | 1 | 10.00 ms | 12.50 ms | 1.25x | 47% | 38% | 285.3 KiB | 1.5 KiB | 700 B |"), md);
        // (1, 512, 512): 8·512·512² + 4·512²·512 = 1610612736 flops; in 20 ms 80.5 GFLOP/s = 72% of 112.
        assertTrue(md.contains("| 1 | 512 | 512 | 8 | none | 2 | 20.00 ms | – | – | 72% | – | – | – | – |"), md);
        // Attention core: 4·512²·8·64 = 536870912 flops in 8 ms = 67.1 GFLOP/s = 105% of 64; in 10 ms 53.7 = 84%.
        assertTrue(md.contains("| 8 | 64 | 512 | none | 1 | 8.00 ms | 10.00 ms | 1.25x | 67.1 | 105% | 84% | 900 B | 300 B |"), md);
    }

    @Test
    void bytesAreWrittenInTheLargestFittingUnit() {
        assertEquals("1023 B", GridReport.bytes(1023));
        assertEquals("64.0 KiB", GridReport.bytes(65536));
        assertEquals("1.50 MiB", GridReport.bytes(1.5 * 1024 * 1024));
        assertEquals("–", GridReport.bytes(Double.NaN));
    }

    @Test
    void chartDrawsEachSideAndTheAttentionCore() throws Exception {
        String svg = GridReport.chart(GridResults.parse(json()), FLOPS_PER_FMA);
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Document doc = factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        // Panels: threads 1 (attn4j and ONNX Runtime, none), threads 2 (attn4j, none), attention core (both).
        assertEquals(5, doc.getElementsByTagNameNS(SvgChart.SVG_NS, "polyline").getLength());
        assertTrue(svg.contains("ONNX Runtime, none") && svg.contains("attn4j, hd = 64")
                && svg.contains("ONNX Runtime, hd = 64"), svg);
        assertNull(GridReport.chart(GridResults.parse("[]"), FLOPS_PER_FMA), "nothing to draw");
    }

    @Test
    void spliceReplacesOnlyTheGeneratedPart() {
        String readme = "# t\n\nbefore\n" + GridReport.BEGIN + "\nold table\n" + GridReport.END + "\nafter\n";
        String spliced = GridReport.splice(readme, "new table\n");
        assertEquals("# t\n\nbefore\n" + GridReport.BEGIN + "\n\nnew table\n\n" + GridReport.END + "\nafter\n", spliced);
        assertEquals(spliced, GridReport.splice(spliced, "new table"), "splicing twice changes nothing");
        assertThrows(IllegalArgumentException.class, () -> GridReport.splice("no markers", "x"));
        assertThrows(IllegalArgumentException.class, () -> GridReport.splice(GridReport.END + GridReport.BEGIN, "x"));
    }

    @Test
    void reportsNameTheForksXxOptions() {
        String json = json().replace("\"jvmArgs\": [\"--add-modules=jdk.incubator.vector\",",
                "\"jvmArgs\": [\"-XX:ObjectAlignmentInBytes=64\", \"-Xmx4g\", \"--add-modules=jdk.incubator.vector\",");
        List<GridResults.Result> results = GridResults.parse(json);
        assertEquals("-XX:ObjectAlignmentInBytes=64", results.get(2).flags());
        assertTrue(GridReport.peerTable(results, FLOPS_PER_FMA).contains(
                "16 flops per vector FMA, JDK 25.0.3, JVM options `-XX:ObjectAlignmentInBytes=64`)."), "peer table header");
        assertTrue(GridReport.markdown(results, FLOPS_PER_FMA).contains(
                "JDK 25.0.3, JVM options `-XX:ObjectAlignmentInBytes=64`. Each point:"), "tables' header");
    }

    @Test
    void peerTableHasTheRatioAndShareOfEveryShapeAndMaskPerThreadCount() {
        String table = GridReport.peerTable(GridResults.parse(json()), FLOPS_PER_FMA);
        assertTrue(table.startsWith("`MultiHeadAttention.forward(x, mask)` against ONNX Runtime in the same grid run"), table);
        assertTrue(table.contains("(64.0 GFLOP/s on 1 thread, 112.0 GFLOP/s on 2 threads; 16 flops per vector FMA, JDK 25.0.3)."), table);
        assertTrue(table.contains("| B, L, E, H | mask | ratio, 1 thread | ratio, 2 threads | share, 1 thread | share, 2 threads |\n"
                + "| --- | --- | ---: | ---: | ---: | ---: |\n"), table);
        // As in the full table: 12.5 / 10 ms = 1.25x at 47% of 64 GFLOP/s on one thread; at L = 512 only two
        // threads ran, with no peer: 72% of 112 GFLOP/s.
        assertTrue(table.contains("| 1, 128, 512, 8 | none | 1.25x | – | 47% | – |\n"), table);
        assertTrue(table.contains("| 1, 512, 512, 8 | none | – | – | – | 72% |\n"), table);
        assertEquals("", GridReport.peerTable(GridResults.parse("[]"), FLOPS_PER_FMA), "no self-attention results");
    }

    @Test
    void writeProducesTableChartAndReadme(@TempDir Path dir) throws Exception {
        Path json = Files.writeString(dir.resolve("grid.json"), json());
        Path readme = Files.writeString(dir.resolve("README.md"), GridReport.BEGIN + "\n" + GridReport.END + "\n");
        Path summary = Files.writeString(dir.resolve("TOP.md"), "# x\n" + GridReport.PEERS_BEGIN + "\nold\n" + GridReport.PEERS_END + "\nend\n");
        GridReport.write(json, dir.resolve("out/grid.md"), dir.resolve("out/grid.svg"), readme, summary, FLOPS_PER_FMA);
        String table = Files.readString(dir.resolve("out/grid.md"));
        assertEquals(GridReport.markdown(GridResults.parse(json()), FLOPS_PER_FMA), table);
        assertTrue(Files.readString(readme).contains(table.strip()));
        assertEquals("# x\n" + GridReport.PEERS_BEGIN + "\n\n" + GridReport.peerTable(GridResults.parse(json()), FLOPS_PER_FMA).strip()
                + "\n\n" + GridReport.PEERS_END + "\nend\n", Files.readString(summary));
        assertTrue(Files.readString(dir.resolve("out/grid.svg")).startsWith("<svg") || Files.readString(dir.resolve("out/grid.svg")).startsWith("<?xml"));
    }

    @Test
    void gridArgumentsParse() {
        assertArrayEquals(new int[]{32, 128, 384, 12}, Grid.shape("32x128x384x12"));
        assertThrows(IllegalArgumentException.class, () -> Grid.shape("32x128x384"));
        assertThrows(IllegalArgumentException.class, () -> Grid.shape("32x128x384x7"));
        assertThrows(IllegalArgumentException.class, () -> Grid.shape("ax1x2x1"));
        assertArrayEquals(new String[0], Grid.list(Map.of("encoders", ""), "encoders"));
        assertArrayEquals(new String[]{"1", "2"}, Grid.list(Map.of("threads", "1,2"), "threads"));
        assertThrows(IllegalArgumentException.class, () -> Grid.list(Map.of("threads", "1,,2"), "threads"));
    }
}
