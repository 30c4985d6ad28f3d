package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A reference path, the only kind of JsonPath the subset has: {@code $}, {@code $.a.b[0].c}, or the same into the
 * context object ({@code $$.State.Name}). Each selects at most one node, so wildcards, filters, slices, {@code ..}
 * and bracketed names are rejected when parsed.
 */
final class RefPath {
    private static final Pattern STEP = Pattern.compile("\\.([^.\\[\\]*?@()'\",\\s]+)|\\[(\\d+)]");
    /** The context object Local fills in; anything else under $$ would silently select nothing, so it is refused. */
    private static final Set<String> EXECUTION_FIELDS = Set.of("Id", "Name", "StartTime", "Input");
    private static final Set<String> STATE_FIELDS = Set.of("Name", "EnteredTime", "RetryCount");

    private final String text;
    private final boolean context;
    private final List<Object> steps; // String field names and Integer indexes

    private RefPath(String text, boolean context, List<Object> steps) {
        this.text = text;
        this.context = context;
        this.steps = steps;
    }

    /** Parses a path; the message of the IllegalArgumentException says what is wrong with it. */
    static RefPath parse(String text) {
        boolean context = text.startsWith("$$");
        if (!text.startsWith("$")) {
            throw new IllegalArgumentException("'" + text + "' is not a path (it must start with $)");
        }
        String rest = text.substring(context ? 2 : 1);
        List<Object> steps = new ArrayList<>();
        Matcher m = STEP.matcher(rest);
        int at = 0;
        while (at < rest.length()) {
            if (!m.find(at) || m.start() != at) {
                throw new IllegalArgumentException("'" + text + "' is not a supported reference path (only $, .field and"
                        + " [index] steps; no wildcards, filters, slices, '..' or ['name'])");
            }
            steps.add(m.group(1) != null ? m.group(1) : (Object) Integer.valueOf(m.group(2)));
            at = m.end();
        }
        if (context) {
            checkContext(text, steps);
        }
        return new RefPath(text, context, List.copyOf(steps));
    }

    private static void checkContext(String text, List<Object> steps) {
        if (steps.isEmpty()) {
            return;
        }
        Object top = steps.get(0);
        Set<String> fields = "Execution".equals(top) ? EXECUTION_FIELDS : "State".equals(top) ? STATE_FIELDS : null;
        boolean ok = fields != null && (steps.size() == 1 || fields.contains(steps.get(1)))
                && (steps.size() <= 2 || "Input".equals(steps.get(1)));
        if (!ok) {
            throw new IllegalArgumentException("'" + text + "' is not in the supported context object ($$.Execution."
                    + "Id|Name|StartTime|Input, $$.State.Name|EnteredTime|RetryCount)");
        }
    }

    /** The node this path selects in the state input (or the context object, for $$ paths), if there is one. */
    Optional<JsonNode> select(JsonNode input, JsonNode contextObject) {
        JsonNode node = context ? contextObject : input;
        for (Object step : steps) {
            if (node == null) {
                return Optional.empty();
            }
            node = step instanceof Integer i ? (node.isArray() ? node.get(i) : null)
                    : (node.isObject() ? node.get((String) step) : null);
        }
        return Optional.ofNullable(node);
    }

    boolean isContext() {
        return context;
    }

    boolean isRoot() {
        return steps.isEmpty();
    }

    /** The steps; only ResultPath, which must be plain field names, needs them. */
    List<Object> steps() {
        return steps;
    }

    @Override
    public String toString() {
        return text;
    }
}
