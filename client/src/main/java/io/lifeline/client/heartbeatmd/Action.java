package io.lifeline.client.heartbeatmd;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One action block: {@code ### [PRIORITY] Name} followed by {@code - **key**: value} lines and an optional
 * {@code - **params**:} sub-list. Keeps its original lines; a change rewrites only the line it touches and a new
 * field is added at the end of the block.
 */
public final class Action {
    /** Fields that define what an action does; {@link HeartbeatFile#computeConfigHash()} covers these only. */
    static final List<String> DEFINITION_FIELDS = List.of("id", "type", "schedule", "retry", "timeout",
            "depends_on", "condition", "command", "target");

    static final class Entry {
        final String key;
        final boolean param;
        String value;
        final TextLine line;

        Entry(String key, boolean param, String value, TextLine line) {
            this.key = key;
            this.param = param;
            this.value = value;
            this.line = line;
        }
    }

    final TextLine heading;
    final Priority priority;
    final String name;
    final int lineNumber;
    final List<Entry> entries = new ArrayList<>();
    ScheduleSpec scheduleSpec;
    Condition parsedCondition;

    Action(TextLine heading, Priority priority, String name, int lineNumber) {
        this.heading = heading;
        this.priority = priority;
        this.name = name;
        this.lineNumber = lineNumber;
    }

    public String id() {
        return field("id");
    }

    public String name() {
        return name;
    }

    public Priority priority() {
        return priority;
    }

    public String type() {
        return field("type");
    }

    public ActionStatus status() {
        String s = field("status");
        return s == null ? ActionStatus.PENDING : ActionStatus.fromLabel(s);
    }

    /** The schedule as written, or null. */
    public String scheduleText() {
        return field("schedule");
    }

    public ScheduleSpec schedule() {
        return scheduleSpec;
    }

    /** {@code retry}: maximum attempts, default 1 (no retry). */
    public int maxAttempts() {
        String r = field("retry");
        return r == null ? 1 : Integer.parseInt(r);
    }

    /** {@code timeout}, default 5m. */
    public Duration timeout() {
        String t = field("timeout");
        return t == null ? Duration.ofMinutes(5) : Durations.parse(t);
    }

    /** {@code depends_on}: one id or a comma-separated list; empty when absent. */
    public List<String> dependsOn() {
        String d = field("depends_on");
        if (d == null || d.isBlank()) {
            return List.of();
        }
        return Arrays.stream(d.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    /** The parsed {@code condition}, or null. */
    public Condition condition() {
        return parsedCondition;
    }

    /** A top-level field's value, or null. */
    public String field(String key) {
        for (Entry e : entries) {
            if (!e.param && e.key.equals(key)) {
                return e.value;
            }
        }
        return null;
    }

    /** The {@code params} sub-list, in file order. */
    public Map<String, String> params() {
        Map<String, String> params = new LinkedHashMap<>();
        for (Entry e : entries) {
            if (e.param) {
                params.put(e.key, e.value);
            }
        }
        return Collections.unmodifiableMap(params);
    }

    /** A field, falling back to the params sub-list ({@code command} and {@code target} may live in either). */
    public String fieldOrParam(String key) {
        String v = field(key);
        return v != null ? v : params().get(key);
    }

    /** 1-based line of the heading in the file as parsed. */
    public int lineNumber() {
        return lineNumber;
    }

    Instant instantField(String key) {
        String v = field(key);
        if (v == null || v.equals("null")) {
            return null;
        }
        try {
            return Instant.parse(v);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** When it last ran: the latest of last_run, completed_at and failed_at. */
    public Instant lastRun() {
        Instant latest = null;
        for (String key : List.of("last_run", "completed_at", "failed_at")) {
            Instant t = instantField(key);
            if (t != null && (latest == null || t.isAfter(latest))) {
                latest = t;
            }
        }
        return latest;
    }

    /**
     * Sets a top-level field: rewrites its line only if the value differs, or adds a line at the end of the block.
     * The value is written as {@link TextLine#oneLine(String)} makes it, so it reads back as written (a line break,
     * separator or control character in it would cut the block or the value).
     */
    void set(String key, String text) {
        String value = TextLine.oneLine(text);
        for (Entry e : entries) {
            if (!e.param && e.key.equals(key)) {
                if (!value.equals(e.value)) {
                    e.value = value;
                    e.line.text = "- **" + key + "**: " + value;
                }
                return;
            }
        }
        TextLine previous = entries.isEmpty() ? heading : entries.get(entries.size() - 1).line;
        entries.add(new Entry(key, false, value, TextLine.after(previous, "- **" + key + "**: " + value)));
    }

    /** Removes a top-level field's line, if there is one. */
    void remove(String key) {
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            if (!e.param && e.key.equals(key)) {
                if (e.line.eol.isEmpty()) {
                    // Last line of the file: the line before it becomes the last, without a terminator.
                    (i == 0 ? heading : entries.get(i - 1).line).eol = "";
                }
                entries.remove(i);
                return;
            }
        }
    }

    void render(StringBuilder out) {
        out.append(heading.text).append(heading.eol);
        for (Entry e : entries) {
            out.append(e.line.text).append(e.line.eol);
        }
    }

    @Override
    public String toString() {
        return "[" + priority + "] " + name + " (" + id() + ")";
    }
}
