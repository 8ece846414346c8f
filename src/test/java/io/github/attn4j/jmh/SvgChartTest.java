package io.github.attn4j.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class SvgChartTest {
    private static final double[] LENGTHS = {128, 512, 2048, 8192};

    private static List<SvgChart.Panel> panels() {
        List<SvgChart.Series> one = List.of(
                new SvgChart.Series("H=1, none", "#1f77b4", "", LENGTHS, new double[]{85.3, 82.9, 71.5, 60.0}),
                new SvgChart.Series("H=8, causal", "#d62728", "6 3", LENGTHS, new double[]{70.1, 88.2, 91.9, 95.5}),
                new SvgChart.Series("H=16 <padding> & co", "#2ca02c", "2 3", new double[]{128, 2048}, new double[]{60, 50}));
        List<SvgChart.Series> two = List.of(
                new SvgChart.Series("H=1, none", "#1f77b4", "", LENGTHS, new double[]{150, 160, 140, 120}),
                new SvgChart.Series("H=8, causal", "#d62728", "6 3", new double[]{512}, new double[]{170}));
        return List.of(new SvgChart.Panel("threads = 1", one, 115.9, "FMA ceiling 115.9 GFLOP/s"),
                new SvgChart.Panel("threads = 2", two, 231.0, "FMA ceiling 231.0 GFLOP/s"));
    }

    private static Document parse(String svg) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    private static List<Element> elements(Document doc, String name) {
        NodeList nodes = doc.getElementsByTagNameNS(SvgChart.SVG_NS, name);
        List<Element> list = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            list.add((Element) nodes.item(i));
        }
        return list;
    }

    private static double[][] points(Element polyline) {
        String[] pairs = polyline.getAttribute("points").trim().split(" ");
        double[][] xy = new double[pairs.length][];
        for (int i = 0; i < pairs.length; i++) {
            String[] parts = pairs[i].split(",");
            xy[i] = new double[]{Double.parseDouble(parts[0]), Double.parseDouble(parts[1])};
        }
        return xy;
    }

    @Test
    void rendersWellFormedSvgWithOnePolylinePerSeries() throws Exception {
        List<SvgChart.Panel> panels = panels();
        Document doc = parse(SvgChart.render("MHA <forward> & more", "L", "GFLOP/s", panels));

        assertEquals("svg", doc.getDocumentElement().getLocalName());
        assertEquals(SvgChart.SVG_NS, doc.getDocumentElement().getNamespaceURI());
        List<Element> polylines = elements(doc, "polyline");
        List<SvgChart.Series> expected = new ArrayList<>();
        panels.forEach(p -> expected.addAll(p.series()));
        assertEquals(expected.size(), polylines.size());
        for (int i = 0; i < polylines.size(); i++) {
            SvgChart.Series s = expected.get(i);
            double[][] xy = points(polylines.get(i));
            assertEquals(s.x().length, xy.length, s.label());
            for (int j = 1; j < xy.length; j++) {
                assertTrue(xy[j][0] > xy[j - 1][0], s.label() + ": x must increase along the polyline");
                assertEquals(s.y()[j] > s.y()[j - 1], xy[j][1] < xy[j - 1][1], s.label() + ": larger y is drawn higher");
            }
            assertEquals(s.color(), polylines.get(i).getAttribute("stroke"));
            assertEquals(s.label(), polylines.get(i).getTextContent());
        }
        assertEquals(2, elements(doc, "line").stream().filter(l -> "reference".equals(l.getAttribute("class"))).count());
    }

    @Test
    void xAxisIsLog2AndSharedAcrossPanels() throws Exception {
        Document doc = parse(SvgChart.render("t", "L", "GFLOP/s", panels()));
        double[][] first = points(elements(doc, "polyline").get(0));
        double step = first[1][0] - first[0][0];
        assertEquals(step, first[2][0] - first[1][0], 0.11, "equal ratios of L are equal distances");
        assertEquals(step, first[3][0] - first[2][0], 0.11);
        double[][] single = points(elements(doc, "polyline").get(4));
        double[][] sameSeriesOtherPanel = points(elements(doc, "polyline").get(3));
        assertEquals(sameSeriesOtherPanel[1][0], single[0][0], 0.051, "L = 512 sits at the same place in panel 2");
        long ticks = elements(doc, "text").stream().filter(t -> t.getTextContent().equals("8192")).count();
        assertEquals(2, ticks, "each panel labels the powers of two from 128 to 8192");
    }

    @Test
    void legendListsEachLabelOnce() throws Exception {
        Document doc = parse(SvgChart.render("t", "L", "GFLOP/s", panels()));
        Element legend = elements(doc, "g").stream().filter(g -> "legend".equals(g.getAttribute("class"))).findFirst().orElseThrow();
        assertEquals(3, legend.getElementsByTagNameNS(SvgChart.SVG_NS, "text").getLength());
    }

    @Test
    void rejectsPointsOutOfOrder() {
        assertThrows(IllegalArgumentException.class,
                () -> new SvgChart.Series("s", "red", "", new double[]{512, 128}, new double[]{1, 2}));
        assertThrows(IllegalArgumentException.class,
                () -> new SvgChart.Series("s", "red", "", new double[]{128}, new double[]{Double.NaN}));
        assertThrows(IllegalArgumentException.class,
                () -> new SvgChart.Series("s", "red", "", new double[0], new double[0]));
        assertThrows(IllegalArgumentException.class,
                () -> SvgChart.render("t", "L", "y", List.of(new SvgChart.Panel("empty", List.of(), Double.NaN, ""))));
    }

    @Test
    void niceStepsAreOneTwoOrFiveTimesAPowerOfTen() {
        assertEquals(20, SvgChart.niceStep(13), 1e-12);
        assertEquals(50, SvgChart.niceStep(21), 1e-12);
        assertEquals(0.1, SvgChart.niceStep(0.07), 1e-12);
        assertEquals(100, SvgChart.niceStep(100), 1e-9);
    }
}
