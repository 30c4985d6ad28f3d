package io.lifeline.client.heartbeatmd;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.schedule.InvalidScheduleException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed heartbeat.md: YAML frontmatter, markdown prose, and {@code ### [PRIORITY] Name} action blocks.
 *
 * <p>The file keeps every original line. {@link #render()} gives back the parsed text byte for byte until something
 * is changed, and a change rewrites only the lines it touches: a frontmatter key's line, an action field's line, or
 * a new line at the end of the frontmatter or of the block. Unknown frontmatter keys, prose, headings and fenced
 * code (headings inside fences are not actions) are kept as they are; an unknown action field is a mistake, refused
 * with its line and the field probably meant ({@link Action#KNOWN_FIELDS}).
 *
 * <p>Not thread-safe; {@link Wake} holds the file lock while it reads, changes and writes one.
 */
public final class HeartbeatFile {
    public static final String STATUS_IDLE = "idle";
    public static final String STATUS_RUNNING = "running";
    public static final String STATUS_ERROR = "error";

    /** Most wakes in a row that failed that error_count counts; it stays there after (no overflow). */
    public static final int MAX_ERROR_COUNT = 999_999_999;
    /** Frontmatter keys the runner writes back; each must be a plain {@code key:} line of its own, once. */
    static final List<String> RUNNER_KEYS = List.of("last_wake", "next_wake", "status", "error_count", "last_error",
            "config_hash");

    // DOTALL: the file's lines end only at \n (TextLine.split), so any other character, U+0085, U+2028 and U+2029
    // included, is part of the line; without it '.' would stop there and cut the field or the block.
    private static final Pattern FIELD = Pattern.compile("- \\*\\*([A-Za-z0-9_]+)\\*\\*:[ \\t]?(.*)", Pattern.DOTALL);
    private static final Pattern PARAM = Pattern.compile("[ \\t]+- ([^:]+?):[ \\t]?(.*)", Pattern.DOTALL);
    private static final Pattern ACTION_HEADING = Pattern.compile("### \\[([^\\]]*)\\][ \\t]*(.*)", Pattern.DOTALL);
    private static final Pattern FRONT_KEY = Pattern.compile("([A-Za-z0-9_]+):(?:[ \\t].*)?", Pattern.DOTALL);
    private static final Pattern PLAIN_SCALAR = Pattern.compile("[A-Za-z0-9_./+\\-][A-Za-z0-9_./:+\\- ]*");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private final List<TextLine> front;
    private final Map<String, Object> frontValues;
    /** Body parts in order: a {@link TextLine} (prose) or an {@link Action}. */
    private final List<Object> body;
    private final List<Action> actions;

    private HeartbeatFile(List<TextLine> front, Map<String, Object> frontValues, List<Object> body,
            List<Action> actions) {
        this.front = front;
        this.frontValues = frontValues;
        this.body = body;
        this.actions = actions;
    }

    /**
     * @throws HeartbeatParseException naming the line and what is wrong
     */
    public static HeartbeatFile parse(String text) {
        if (text.isEmpty()) {
            throw HeartbeatParseException.corrupt(1, "file is empty");
        }
        List<TextLine> lines = TextLine.split(text);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).text.indexOf('\0') >= 0) {
                throw HeartbeatParseException.corrupt(i + 1, "contains a NUL byte; this is not a text file");
            }
        }
        if (!lines.get(0).text.equals("---")) {
            throw HeartbeatParseException.corrupt(1, "file must start with a '---' line opening the YAML frontmatter");
        }
        int close = -1;
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).text.equals("---")) {
                close = i;
                break;
            }
        }
        if (close < 0) {
            throw HeartbeatParseException.corrupt(1, "frontmatter opened here is never closed with a '---' line");
        }
        List<TextLine> front = new ArrayList<>(lines.subList(0, close + 1));
        Map<String, Object> values = parseFrontmatter(front);
        List<Object> body = new ArrayList<>();
        List<Action> actions = new ArrayList<>();
        parseBody(lines, close + 1, body, actions);
        HeartbeatFile file = new HeartbeatFile(front, values, body, actions);
        file.validate();
        return file;
    }

    private static Map<String, Object> parseFrontmatter(List<TextLine> front) {
        StringBuilder yaml = new StringBuilder();
        for (int i = 1; i < front.size() - 1; i++) {
            yaml.append(front.get(i).text).append('\n');
        }
        Object parsed;
        try {
            parsed = yaml.toString().isBlank() ? new LinkedHashMap<>() : YAML.readValue(yaml.toString(), Object.class);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            int line = at == null || at.getLineNr() < 1 ? 1 : at.getLineNr() + 1;
            throw HeartbeatParseException.corrupt(line, "frontmatter is not valid YAML: " + e.getOriginalMessage());
        }
        if (!(parsed instanceof Map)) {
            throw HeartbeatParseException.corrupt(2, "frontmatter must be YAML 'key: value' lines");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        ((Map<?, ?>) parsed).forEach((k, v) -> values.put(String.valueOf(k), v));
        int versionLine = frontLine(front, "version");
        Object version = values.get("version");
        if (version == null) {
            throw HeartbeatParseException.invalid(1, "frontmatter has no 'version: 1'");
        }
        if (!"1".equals(String.valueOf(version))) {
            throw HeartbeatParseException.invalid(versionLine, "unsupported version " + version + "; this runner reads version 1");
        }
        Object status = values.get("status");
        if (status != null && !List.of(STATUS_IDLE, STATUS_RUNNING, STATUS_ERROR).contains(String.valueOf(status))) {
            throw HeartbeatParseException.invalid(frontLine(front, "status"),
                    "unknown status '" + status + "'; use idle, running or error");
        }
        for (String key : RUNNER_KEYS) {
            int first = frontIndex(front, key);
            if (values.containsKey(key) && first < 0) {
                throw HeartbeatParseException.invalid(1, "frontmatter key '" + key + "' must be written as a plain '"
                        + key + ": value' line of its own (the runner rewrites that line)");
            }
            for (int i = first + 1; first >= 0 && i < front.size() - 1; i++) {
                Matcher m = FRONT_KEY.matcher(front.get(i).text);
                if (m.matches() && m.group(1).equals(key)) {
                    throw HeartbeatParseException.invalid(i + 1, "frontmatter key '" + key + "' appears twice (first on line "
                            + (first + 1) + ")");
                }
            }
        }
        Object errors = values.get("error_count");
        if (errors != null && !(String.valueOf(errors).matches("[0-9]{1,9}")
                && Integer.parseInt(String.valueOf(errors)) <= MAX_ERROR_COUNT)) {
            throw HeartbeatParseException.invalid(frontLine(front, "error_count"),
                    "error_count must be a whole number from 0 to " + MAX_ERROR_COUNT + ", got '" + printable(errors) + "'");
        }
        for (String key : List.of("last_wake", "next_wake")) {
            Object v = values.get(key);
            // next_wake is only a record (each wake computes it afresh, and it may lie past 9999); last_wake is
            // computed from, so it is held to the years 0000-9999 like the action's times.
            if (v != null && !(v instanceof String && (key.equals("next_wake") ? parsesAsInstant((String) v)
                    : parsesAsRecordedInstant((String) v)))) {
                throw HeartbeatParseException.invalid(frontLine(front, key), key + " must be an ISO-8601 instant "
                        + "such as 2024-01-15T10:30:00Z" + (key.equals("next_wake") ? "" : " in the years 0000 to 9999")
                        + ", got '" + printable(v) + "'");
            }
        }
        return values;
    }

    private static boolean parsesAsInstant(String s) {
        try {
            Instant.parse(s);
            return true;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    /** An instant the runner computes from: ISO-8601, in the years 0000 to 9999 (four digits, no sign). */
    private static boolean parsesAsRecordedInstant(String s) {
        return parsesAsInstant(s) && !s.startsWith("+") && !s.startsWith("-");
    }

    /** 1-based line of a top-level frontmatter key, or 1 if it is not there. */
    private static int frontLine(List<TextLine> front, String key) {
        int i = frontIndex(front, key);
        return i < 0 ? 1 : i + 1;
    }

    private static int frontIndex(List<TextLine> front, String key) {
        for (int i = 1; i < front.size() - 1; i++) {
            Matcher m = FRONT_KEY.matcher(front.get(i).text);
            if (m.matches() && m.group(1).equals(key)) {
                return i;
            }
        }
        return -1;
    }

    private static void parseBody(List<TextLine> lines, int start, List<Object> body, List<Action> actions) {
        boolean inFence = false;
        int i = start;
        while (i < lines.size()) {
            TextLine line = lines.get(i);
            String t = line.text;
            if (t.stripLeading().startsWith("```") || t.stripLeading().startsWith("~~~")) {
                inFence = !inFence;
            }
            Matcher heading = ACTION_HEADING.matcher(t);
            if (inFence || !t.startsWith("### ")) {
                body.add(line);
                i++;
                continue;
            }
            if (!heading.matches()) {
                if (i + 1 < lines.size() && FIELD.matcher(lines.get(i + 1).text).matches()) {
                    throw HeartbeatParseException.invalid(i + 1,
                            "action heading needs a priority: '### [PRIORITY] Name' with CRITICAL, HIGH, MEDIUM, LOW or BG");
                }
                body.add(line);
                i++;
                continue;
            }
            Priority priority = Priority.fromLabel(heading.group(1).strip());
            if (priority == null) {
                throw HeartbeatParseException.invalid(i + 1, "unknown priority [" + heading.group(1)
                        + "]; use CRITICAL, HIGH, MEDIUM, LOW or BG");
            }
            String name = heading.group(2).strip();
            if (name.isEmpty()) {
                throw HeartbeatParseException.invalid(i + 1, "action heading has no name after [" + priority + "]");
            }
            Action action = new Action(line, priority, name, i + 1);
            i++;
            boolean inParams = false;
            Map<String, Integer> seen = new HashMap<>();
            while (i < lines.size()) {
                TextLine l = lines.get(i);
                Matcher f = FIELD.matcher(l.text);
                Matcher p = PARAM.matcher(l.text);
                if (f.matches()) {
                    String key = f.group(1);
                    if (seen.containsKey(key)) {
                        throw HeartbeatParseException.invalid(i + 1, "field '" + key + "' appears twice in action '"
                                + name + "' (first on line " + seen.get(key) + ")");
                    }
                    seen.put(key, i + 1);
                    inParams = key.equals("params");
                    action.entries.add(new Action.Entry(key, false, f.group(2).strip(), l));
                } else if (inParams && p.matches()) {
                    action.entries.add(new Action.Entry(p.group(1).strip(), true, p.group(2).strip(), l));
                } else {
                    break;
                }
                i++;
            }
            body.add(action);
            actions.add(action);
        }
    }

    private void validate() {
        Map<String, Action> byId = new HashMap<>();
        String zone = frontValues.get("timezone") == null ? null : String.valueOf(frontValues.get("timezone"));
        for (Action a : actions) {
            String id = a.id();
            if (id == null || id.isEmpty()) {
                throw HeartbeatParseException.invalid(a.lineNumber, "action '" + a.name + "' has no '- **id**:' line");
            }
            if (byId.containsKey(id)) {
                throw HeartbeatParseException.invalid(a.lineNumber, "duplicate action id '" + id
                        + "' (also on line " + byId.get(id).lineNumber + ")");
            }
            byId.put(id, a);
            if (a.type() == null || a.type().isEmpty()) {
                throw HeartbeatParseException.invalid(a.lineNumber, "action '" + id + "' has no '- **type**:' line");
            }
            for (Action.Entry e : a.entries) {
                if (!e.param && !Action.KNOWN_FIELDS.contains(e.key)) {
                    String meant = Action.meant(e.key);
                    throw HeartbeatParseException.invalid(lineOf(a, e.key), "unknown field '" + printable(e.key)
                            + "' in action '" + id + "'" + (meant == null ? "" : "; did you mean '" + meant + "'?")
                            + " (fields: id, type, status, schedule, command, target, params, retry, retry_delay, "
                            + "timeout, depends_on, condition, description)");
                }
            }
            if (a.field("status") != null && a.status() == null) {
                throw HeartbeatParseException.invalid(lineOf(a, "status"), "unknown status '" + a.field("status")
                        + "'; use pending, running, completed, failed, skipped or blocked");
            }
            String retry = a.field("retry");
            if (retry != null && !retry.matches("[1-9][0-9]{0,2}")) {
                throw HeartbeatParseException.invalid(lineOf(a, "retry"),
                        "retry must be the maximum number of attempts, 1 to 999, got '" + retry + "'");
            }
            String timeout = a.field("timeout");
            if (timeout != null && (Durations.parse(timeout) == null || Durations.parse(timeout).isZero())) {
                throw HeartbeatParseException.invalid(lineOf(a, "timeout"),
                        "timeout must be a duration such as 500ms, 30s, 5m or 1h, got '" + timeout + "'");
            }
            try {
                a.scheduleSpec = ScheduleSpec.parse(a.scheduleText(), zone);
            } catch (InvalidScheduleException e) {
                throw HeartbeatParseException.invalid(lineOf(a, "schedule"), "invalid schedule: " + e.getMessage()
                        + " (the runner also knows startup and on_change:<path>)");
            }
            if (a.field("condition") != null) {
                try {
                    a.parsedCondition = Condition.parse(a.field("condition"));
                } catch (IllegalArgumentException e) {
                    throw HeartbeatParseException.invalid(lineOf(a, "condition"), e.getMessage());
                }
            }
            for (String key : List.of("completed_at", "failed_at", "next_retry", "last_run")) {
                String v = a.field(key);
                if (v != null && !v.equals("null") && !parsesAsRecordedInstant(v)) {
                    throw HeartbeatParseException.invalid(lineOf(a, key), key + " must be an ISO-8601 instant such "
                            + "as 2024-01-15T10:32:15Z in the years 0000 to 9999, got '" + printable(v) + "'");
                }
            }
            String rc = a.field("retry_count");
            if (rc != null && !rc.matches("[0-9]{1,3}/[0-9]{1,3}")) {
                throw HeartbeatParseException.invalid(lineOf(a, "retry_count"),
                        "retry_count must read attempts/max, each 0 to 999, e.g. 2/3, got '" + printable(rc) + "'");
            }
        }
        for (Action a : actions) {
            for (String dep : a.dependsOn()) {
                if (!byId.containsKey(dep)) {
                    throw HeartbeatParseException.invalid(lineOf(a, "depends_on"),
                            "depends_on names '" + dep + "', which is not an action id in this file");
                }
                if (dep.equals(a.id())) {
                    throw HeartbeatParseException.invalid(lineOf(a, "depends_on"), "action '" + dep + "' depends on itself");
                }
            }
        }
    }

    /** The 1-based line of an action's field as parsed (the heading's line if the field is absent). */
    private int lineOf(Action a, String key) {
        int n = a.lineNumber;
        for (Action.Entry e : a.entries) {
            n++;
            if (!e.param && e.key.equals(key)) {
                return n;
            }
        }
        return a.lineNumber;
    }

    /** The text: the parsed bytes where nothing changed. */
    public String render() {
        StringBuilder out = new StringBuilder();
        for (TextLine l : front) {
            out.append(l.text).append(l.eol);
        }
        for (Object part : body) {
            if (part instanceof Action a) {
                a.render(out);
            } else {
                TextLine l = (TextLine) part;
                out.append(l.text).append(l.eol);
            }
        }
        return out.toString();
    }

    /** All action blocks in file order. */
    public List<Action> actions() {
        return Collections.unmodifiableList(actions);
    }

    /** The action with this id, or null. */
    public Action action(String id) {
        for (Action a : actions) {
            if (a.id().equals(id)) {
                return a;
            }
        }
        return null;
    }

    /** Every frontmatter key and its YAML value, unknown keys included, in file order. */
    public Map<String, Object> frontmatter() {
        return Collections.unmodifiableMap(frontValues);
    }

    private String frontString(String key) {
        Object v = frontValues.get(key);
        return v == null ? null : String.valueOf(v);
    }

    public int version() {
        return Integer.parseInt(frontString("version"));
    }

    public Instant lastWake() {
        String v = frontString("last_wake");
        return v == null ? null : Instant.parse(v);
    }

    public Instant nextWake() {
        String v = frontString("next_wake");
        return v == null ? null : Instant.parse(v);
    }

    /** idle, running or error; null when absent. */
    public String status() {
        return frontString("status");
    }

    /** 0 to {@link #MAX_ERROR_COUNT} (parse refuses anything else). */
    public int errorCount() {
        String v = frontString("error_count");
        return v == null ? 0 : Integer.parseInt(v);
    }

    public String lastError() {
        return frontString("last_error");
    }

    public String configHash() {
        return frontString("config_hash");
    }

    /**
     * Sets a top-level frontmatter key: rewrites its line (and any indented continuation lines) only if the value
     * differs, or adds {@code key: value} before the closing {@code ---}. A null value is written as {@code null}.
     * Strings that are not safe as plain YAML are double-quoted.
     */
    void setFrontmatter(String key, Object value) {
        String rendered = key + ": " + yamlScalar(value);
        int i = frontIndex(front, key);
        if (i >= 0) {
            Object old = frontValues.get(key);
            boolean same = old == null ? value == null : value != null && String.valueOf(old).equals(String.valueOf(value));
            if (!same || !front.get(i).text.startsWith(key + ":")) {
                front.get(i).text = rendered;
                while (i + 1 < front.size() - 1 && (front.get(i + 1).text.startsWith(" ")
                        || front.get(i + 1).text.startsWith("\t") || front.get(i + 1).text.startsWith("- "))) {
                    front.remove(i + 1);
                }
            }
        } else {
            int close = front.size() - 1;
            TextLine previous = front.get(close - 1);
            front.add(close, new TextLine(rendered, previous.eol.isEmpty() ? "\n" : previous.eol));
        }
        frontValues.put(key, value);
    }

    /** A value echoed into a parse error: control characters and separators shown as escapes, cut to 60. */
    static String printable(Object value) {
        String s = String.valueOf(value);
        String cut = s.length() <= 60 ? s : s.substring(0, Character.isHighSurrogate(s.charAt(59)) ? 59 : 60) + "...";
        StringBuilder out = new StringBuilder();
        for (char c : cut.toCharArray()) {
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    static String yamlScalar(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Number) {
            return value.toString();
        }
        String s = value.toString();
        boolean plain = PLAIN_SCALAR.matcher(s).matches() && !s.endsWith(" ") && !s.contains(": ")
                && !s.endsWith(":") && !List.of("null", "true", "false", "yes", "no", "on", "off", "~")
                .contains(s.toLowerCase(Locale.ROOT)) && !s.startsWith("-");
        if (plain && !s.matches("[0-9.+\\-]+")) {
            return s;
        }
        // Double-quoted, with every character YAML would not read back as itself escaped: C0 and C1 controls and
        // DEL are not allowed in a YAML stream, U+0085/U+2028/U+2029 are line breaks to YAML (folded into a space),
        // U+FEFF is a byte order mark, and an unpaired surrogate is no character at all.
        StringBuilder q = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pairedSurrogate = Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1));
            if (pairedSurrogate) {
                q.append(c).append(s.charAt(++i));
                continue;
            }
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                case '\r' -> q.append("\\r");
                case '\t' -> q.append("\\t");
                default -> {
                    if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == '\u2028' || c == '\u2029' || c == '\uFEFF'
                            || c == '\uFFFE' || c == '\uFFFF' || Character.isSurrogate(c)) {
                        q.append(String.format("\\u%04X", (int) c));
                    } else {
                        q.append(c);
                    }
                }
            }
        }
        return q.append('"').toString();
    }

    /**
     * A hash of what the actions are (priority, name and the defining fields and params; not their run state),
     * so a person's edit to the plan shows as a new {@code config_hash}. First 12 hex digits of SHA-256.
     */
    public String computeConfigHash() {
        StringBuilder canonical = new StringBuilder();
        for (Action a : actions) {
            canonical.append(a.priority).append('|').append(a.name).append('\n');
            for (String key : Action.DEFINITION_FIELDS) {
                String v = a.field(key);
                if (v != null) {
                    canonical.append(key).append('=').append(v).append('\n');
                }
            }
            a.params().forEach((k, v) -> canonical.append("param.").append(k).append('=').append(v).append('\n'));
        }
        return sha256Hex(canonical.toString().getBytes(StandardCharsets.UTF_8)).substring(0, 12);
    }

    static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
