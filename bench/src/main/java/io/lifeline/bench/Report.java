package io.lifeline.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The run's figures: each row a measured value, the reference it is compared with in the same run, their
 * ratio, and the target where the issue sets one. Printed as a table and written as JSON.
 */
public final class Report {

    /** One figure. {@code reference} and {@code ratio} may be NaN when there is none; {@code met} null when no target. */
    public record Row(String section, String figure, double value, String unit, String referenceName,
                      double reference, double ratio, String target, Boolean met) {
    }

    private final List<Row> rows = new ArrayList<>();
    private final ObjectNode details = Json.object();
    private final List<String> notes = new ArrayList<>();

    public synchronized void add(String section, String figure, double value, String unit, String referenceName,
                                 double reference, String target, Boolean met) {
        double ratio = Double.isNaN(reference) || reference == 0 ? Double.NaN : value / reference;
        rows.add(new Row(section, figure, value, unit, referenceName, reference, ratio, target, met));
    }

    public synchronized void add(String section, String figure, double value, String unit, String target, Boolean met) {
        add(section, figure, value, unit, null, Double.NaN, target, met);
    }

    public synchronized void note(String text) {
        notes.add(text);
    }

    public ObjectNode details() {
        return details;
    }

    public synchronized List<Row> rows() {
        return List.copyOf(rows);
    }

    public synchronized String table() {
        StringBuilder sb = new StringBuilder();
        String fmt = "%-4s %-58s %14s %-8s %-34s %12s %8s  %-22s %s%n";
        sb.append(String.format(Locale.ROOT, fmt, "sec", "figure", "measured", "unit", "reference (same run)",
                "ref value", "ratio", "target", "met"));
        sb.append("-".repeat(180)).append('\n');
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, fmt, r.section(), r.figure(), num(r.value()), r.unit(),
                    r.referenceName() == null ? "-" : r.referenceName(), num(r.reference()), num(r.ratio()),
                    r.target() == null ? "-" : r.target(), r.met() == null ? "-" : r.met() ? "yes" : "NO"));
        }
        for (String n : notes) {
            sb.append("note: ").append(n).append('\n');
        }
        return sb.toString();
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e12) {
            return String.format(Locale.ROOT, "%d", (long) v);
        }
        if (Math.abs(v) >= 100) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (Math.abs(v) >= 0.01) {
            return String.format(Locale.ROOT, "%.3f", v);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    public synchronized ObjectNode json(ObjectNode meta) {
        ObjectNode root = Json.object();
        root.set("run", meta);
        ArrayNode arr = root.putArray("figures");
        for (Row r : rows) {
            ObjectNode o = arr.addObject().put("section", r.section()).put("figure", r.figure());
            put(o, "value", r.value());
            o.put("unit", r.unit());
            if (r.referenceName() != null) {
                o.put("reference", r.referenceName());
                put(o, "referenceValue", r.reference());
                put(o, "ratio", r.ratio());
            }
            if (r.target() != null) {
                o.put("target", r.target());
            }
            if (r.met() != null) {
                o.put("met", r.met());
            }
        }
        ArrayNode n = root.putArray("notes");
        notes.forEach(n::add);
        root.set("details", details);
        return root;
    }

    private static void put(ObjectNode o, String name, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            o.putNull(name);
        } else {
            o.put(name, v);
        }
    }
}
