package io.github.attn4j.jmh;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A line chart as a standalone SVG document, written by hand so that the benchmarks need no
 * plotting library. Panels sit side by side and share both axes: x on a log2 scale (ticks at the
 * powers of two in range), y linear from 0. Every series is one {@code <polyline>} with a circle
 * on each point; a panel may carry a horizontal dashed reference line (the FMA ceiling in the
 * grid). One legend on the right lists each series label once.
 */
public final class SvgChart {
    /** The SVG namespace, declared on the root element. */
    public static final String SVG_NS = "http://www.w3.org/2000/svg";

    private static final int PLOT_WIDTH = 420;
    private static final int PLOT_HEIGHT = 300;
    private static final int LEFT = 70;
    private static final int GAP = 80;
    private static final int TOP = 70;
    private static final int BOTTOM = 60;
    private static final int LEGEND_WIDTH = 190;
    private static final int LEGEND_ROW = 20;
    /** Room left and right of the outermost points, in octaves. */
    private static final double X_PAD = 0.25;

    private SvgChart() {
    }

    /**
     * One line of the chart.
     *
     * @param label legend text
     * @param color SVG stroke color, e.g. {@code #1f77b4}
     * @param dash  SVG {@code stroke-dasharray}, empty for a solid line
     * @param x     positive x values, strictly increasing
     * @param y     finite y values, as many as x
     */
    public record Series(String label, String color, String dash, double[] x, double[] y) {
        /** Checks that the points are non-empty, paired, finite, x positive and increasing. */
        public Series {
            Objects.requireNonNull(label, "label");
            Objects.requireNonNull(color, "color");
            Objects.requireNonNull(dash, "dash");
            if (x.length == 0 || x.length != y.length) {
                throw new IllegalArgumentException("series " + label + ": expected as many x as y values, at least one, got "
                        + x.length + " and " + y.length);
            }
            for (int i = 0; i < x.length; i++) {
                if (!(x[i] > 0) || Double.isInfinite(x[i]) || !Double.isFinite(y[i]) || (i > 0 && !(x[i] > x[i - 1]))) {
                    throw new IllegalArgumentException("series " + label + ": expected finite points with x positive and "
                            + "strictly increasing, got (" + x[i] + ", " + y[i] + ") at index " + i);
                }
            }
            x = x.clone();
            y = y.clone();
        }
    }

    /**
     * One panel: a titled plot of its series.
     *
     * @param title          text above the plot
     * @param series         the lines
     * @param reference      y of a horizontal dashed line, or NaN for none
     * @param referenceLabel text written on the reference line
     */
    public record Panel(String title, List<Series> series, double reference, String referenceLabel) {
        /** Copies the series list. */
        public Panel {
            Objects.requireNonNull(title, "title");
            Objects.requireNonNull(referenceLabel, "referenceLabel");
            series = List.copyOf(series);
        }
    }

    /**
     * Renders the panels as one SVG document.
     *
     * @param title  chart title
     * @param xLabel x axis title (the axis is log2)
     * @param yLabel y axis title
     * @param panels at least one panel with at least one series in all
     * @return the SVG document text
     */
    public static String render(String title, String xLabel, String yLabel, List<Panel> panels) {
        double xMin = Double.POSITIVE_INFINITY;
        double xMax = Double.NEGATIVE_INFINITY;
        double yMax = 0;
        Map<String, Series> legend = new LinkedHashMap<>();
        for (Panel panel : panels) {
            for (Series s : panel.series()) {
                xMin = Math.min(xMin, s.x()[0]);
                xMax = Math.max(xMax, s.x()[s.x().length - 1]);
                for (double v : s.y()) {
                    yMax = Math.max(yMax, v);
                }
                legend.putIfAbsent(s.label(), s);
            }
            if (Double.isFinite(panel.reference())) {
                yMax = Math.max(yMax, panel.reference());
            }
        }
        if (legend.isEmpty()) {
            throw new IllegalArgumentException("panels: expected at least one series, got none");
        }
        double lo = log2(xMin);
        double hi = log2(xMax);
        if (hi - lo < 1e-9) {
            lo -= 1;
            hi += 1;
        }
        lo -= X_PAD;
        hi += X_PAD;
        double step = niceStep(yMax > 0 ? yMax * 1.08 / 5 : 0.2);
        double yTop = step * Math.ceil(yMax * 1.08 / step);
        if (yTop <= 0) {
            yTop = step;
        }
        Axes axes = new Axes(lo, hi, yTop);

        int legendLeft = LEFT + panels.size() * (PLOT_WIDTH + GAP) - GAP / 2;
        int width = legendLeft + LEGEND_WIDTH;
        int height = Math.max(TOP + PLOT_HEIGHT + BOTTOM, TOP + LEGEND_ROW * (legend.size() + 1));
        StringBuilder svg = new StringBuilder();
        svg.append(format("<svg xmlns=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">\n", SVG_NS, width, height, width, height));
        svg.append(format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height));
        svg.append(format("<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", LEFT, escape(title)));
        for (int p = 0; p < panels.size(); p++) {
            panel(svg, panels.get(p), LEFT + p * (PLOT_WIDTH + GAP), axes, step, xLabel, yLabel);
        }
        legend(svg, legend.values(), legendLeft);
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** The shared scales: log2 x range and y from 0 to {@code yTop}. */
    private record Axes(double log2Min, double log2Max, double yTop) {
        double px(double left, double x) {
            return left + PLOT_WIDTH * (log2(x) - log2Min) / (log2Max - log2Min);
        }

        double py(double y) {
            return TOP + PLOT_HEIGHT * (1 - y / yTop);
        }
    }

    private static void panel(StringBuilder svg, Panel panel, int left, Axes axes, double step, String xLabel, String yLabel) {
        svg.append("<g class=\"panel\">\n");
        svg.append(format("<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s</text>\n",
                left, TOP - 12, escape(panel.title())));
        for (int i = 0; i * step <= axes.yTop() + step * 1e-9; i++) {
            double y = axes.py(i * step);
            svg.append(format("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
                    left, y, left + PLOT_WIDTH, y));
            svg.append(format("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    left - 6, y + 4, number(i * step)));
        }
        for (int e = (int) Math.ceil(axes.log2Min() - 1e-9); e <= axes.log2Max() + 1e-9; e++) {
            double x = axes.px(left, Math.pow(2, e));
            svg.append(format("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e0e0e0\"/>\n",
                    x, TOP, x, TOP + PLOT_HEIGHT));
            svg.append(format("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    x, TOP + PLOT_HEIGHT + 16, number(Math.pow(2, e))));
        }
        svg.append(format("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
                left, TOP, PLOT_WIDTH, PLOT_HEIGHT));
        svg.append(format("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                left + PLOT_WIDTH / 2, TOP + PLOT_HEIGHT + 38, escape(xLabel)));
        svg.append(format("<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
                left - 46, TOP + PLOT_HEIGHT / 2, escape(yLabel)));
        if (Double.isFinite(panel.reference())) {
            double y = axes.py(panel.reference());
            svg.append(format("<line class=\"reference\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\" "
                    + "stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n", left, y, left + PLOT_WIDTH, y));
            svg.append(format("<text x=\"%d\" y=\"%.1f\" fill=\"#555\">%s</text>\n",
                    left + 6, y - 5, escape(panel.referenceLabel())));
        }
        for (Series s : panel.series()) {
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < s.x().length; i++) {
                points.append(i == 0 ? "" : " ").append(format("%.1f,%.1f", axes.px(left, s.x()[i]), axes.py(s.y()[i])));
            }
            svg.append(format("<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\">"
                    + "<title>%s</title></polyline>\n", escape(s.color()), dash(s.dash()), points, escape(s.label())));
            for (int i = 0; i < s.x().length; i++) {
                svg.append(format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                        axes.px(left, s.x()[i]), axes.py(s.y()[i]), escape(s.color())));
            }
        }
        svg.append("</g>\n");
    }

    private static void legend(StringBuilder svg, Iterable<Series> entries, int left) {
        svg.append("<g class=\"legend\">\n");
        int y = TOP + 6;
        for (Series s : entries) {
            svg.append(format("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                    left, y, left + 30, y, escape(s.color()), dash(s.dash())));
            svg.append(format("<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>\n", left + 15, y, escape(s.color())));
            svg.append(format("<text x=\"%d\" y=\"%d\">%s</text>\n", left + 38, y + 4, escape(s.label())));
            y += LEGEND_ROW;
        }
        svg.append("</g>\n");
    }

    private static String dash(String dash) {
        return dash.isEmpty() ? "" : " stroke-dasharray=\"" + escape(dash) + "\"";
    }

    /** A step of 1, 2 or 5 times a power of ten, at least {@code raw}. */
    static double niceStep(double raw) {
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double normalized = raw / magnitude;
        double nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10;
        return nice * magnitude;
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
    }

    /** Integers without a fraction, anything else with up to three significant decimals. */
    private static String number(double v) {
        if (Math.abs(v - Math.rint(v)) < 1e-9 * Math.max(1, Math.abs(v))) {
            return Long.toString(Math.round(v));
        }
        return new BigDecimal(v).round(new MathContext(3)).stripTrailingZeros().toPlainString();
    }

    /** Escapes text for XML content and attribute values. */
    static String escape(String text) {
        StringBuilder sb = new StringBuilder(text.length());
        for (char c : text.toCharArray()) {
            switch (c) {
                case '&' -> sb.append("&amp;");
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&apos;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }

    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }
}
