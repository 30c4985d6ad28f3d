package io.lifeline.client.heartbeatmd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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

    /**
     * Every field an action may have: what a person writes ({@code status} and {@code description} besides the
     * definition, {@code retry_delay}, {@code params}) and what the runner writes back. Anything else is a mistake
     * (a typo such as {@code comand}, or {@code url} for {@code target}) and is refused, naming the line.
     */
    static final List<String> KNOWN_FIELDS = List.of("id", "type", "status", "schedule", "command", "target", "params",
            "retry", "retry_delay", "timeout", "depends_on", "condition", "description",
            "completed_at", "duration", "result", "failed_at", "error", "retry_count", "next_retry", "last_run",
            "watched_hash", "deferred", "definition_hash");

    /** Fields people write for another one: the one meant. */
    static final Map<String, String> MEANT = Map.ofEntries(Map.entry("url", "target"), Map.entry("uri", "target"),
            Map.entry("endpoint", "target"), Map.entry("host", "target"), Map.entry("cmd", "command"),
            Map.entry("run", "command"), Map.entry("script", "command"), Map.entry("exec", "command"),
            Map.entry("retries", "retry"), Map.entry("max_attempts", "retry"), Map.entry("attempts", "retry"),
            Map.entry("depends", "depends_on"), Map.entry("dependencies", "depends_on"), Map.entry("after", "depends_on"),
            Map.entry("requires", "depends_on"), Map.entry("if", "condition"), Map.entry("when", "condition"),
            Map.entry("every", "schedule"), Map.entry("cron", "schedule"), Map.entry("interval", "schedule"),
            Map.entry("at", "schedule"), Map.entry("kind", "type"), Map.entry("action", "type"),
            Map.entry("priority", "the heading, e.g. ### [HIGH] Name"), Map.entry("name", "the heading, e.g. ### [HIGH] Name"),
            Map.entry("state", "status"), Map.entry("args", "params"), Map.entry("env", "params"),
            Map.entry("note", "description"), Map.entry("notes", "description"), Map.entry("comment", "description"));

    /** The known field {@code key} was probably meant as, or null. */
    static String meant(String key) {
        String lower = key.toLowerCase(Locale.ROOT).replace('-', '_');
        if (KNOWN_FIELDS.contains(lower)) {
            return lower;
        }
        if (MEANT.containsKey(lower)) {
            return MEANT.get(lower);
        }
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : KNOWN_FIELDS) {
            int d = distance(lower, known);
            if (d < bestDistance) {
                best = known;
                bestDistance = d;
            }
        }
        return bestDistance <= Math.max(1, Math.min(2, lower.length() / 3)) ? best : null;
    }

    /** Edit distance (insert, delete, replace, and swapping two neighbours). */
    private static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

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

    /**
     * A hash of what this action is (priority, name, the defining fields and params; not its run state): the
     * runner writes it as {@code definition_hash} with each result, so an edit shows and the action runs afresh.
     * First 12 hex digits of SHA-256.
     */
    public String definitionHash() {
        StringBuilder canonical = new StringBuilder();
        canonical.append(priority).append('|').append(name).append('\n');
        for (String key : DEFINITION_FIELDS) {
            String v = field(key);
            if (v != null) {
                canonical.append(key).append('=').append(v).append('\n');
            }
        }
        params().forEach((k, v) -> canonical.append("param.").append(k).append('=').append(v).append('\n'));
        return HeartbeatFile.sha256Hex(canonical.toString().getBytes(StandardCharsets.UTF_8))
                .substring(0, 12);
    }

    /** Its definition changed since the run whose result it carries (a {@code definition_hash} that no longer fits). */
    public boolean edited() {
        String recorded = field("definition_hash");
        return recorded != null && !recorded.equals(definitionHash());
    }

    /**
     * A person asked for a fresh run: the action was edited since its last result, or its status was set back to
     * {@code pending} while a result is still on it ({@code completed_at} or {@code failed_at}; the runner never
     * writes pending beside them). It is due now (an {@code at:} action at its instant), its retries start again.
     */
    public boolean rerunAsked() {
        return edited() || status() == ActionStatus.PENDING && (field("completed_at") != null
                || field("failed_at") != null);
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
