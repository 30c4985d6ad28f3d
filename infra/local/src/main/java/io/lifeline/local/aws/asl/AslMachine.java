package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A parsed and validated state machine in the subset of the Amazon States Language that Lifeline's flows use.
 * Anything outside the subset is refused here, at load time, so a definition that would behave differently in Local
 * than in Step Functions never starts running.
 */
public final class AslMachine {
    static final String ALL = "States.ALL";
    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final List<String> TOP_FIELDS = List.of("Comment", "StartAt", "States", "Version");
    private static final Map<String, List<String>> FIELDS = Map.of(
            "Task", List.of("Type", "Comment", "Resource", "Parameters", "InputPath", "ResultSelector", "ResultPath",
                    "OutputPath", "Retry", "Catch", "Next", "End"),
            "Pass", List.of("Type", "Comment", "Result", "Parameters", "InputPath", "ResultPath", "OutputPath", "Next",
                    "End"),
            "Wait", List.of("Type", "Comment", "Seconds", "SecondsPath", "Timestamp", "TimestampPath", "InputPath",
                    "OutputPath", "Next", "End"),
            "Choice", List.of("Type", "Comment", "Choices", "Default", "InputPath", "OutputPath"),
            "Succeed", List.of("Type", "Comment", "InputPath", "OutputPath"),
            "Fail", List.of("Type", "Comment", "Error", "Cause"));

    /** A state; InputPath/OutputPath/ResultPath fields hold null where the definition says JSON null. */
    sealed interface State permits Task, Pass, Wait, Choice, Succeed, Fail {
        String name();
    }

    /** {@code next} is null for End. */
    record Task(String name, String resource, RefPath inputPath, JsonNode parameters, JsonNode resultSelector,
                RefPath resultPath, RefPath outputPath, List<Retrier> retry, List<Catcher> catchers, String next)
            implements State {
    }

    record Pass(String name, RefPath inputPath, JsonNode parameters, JsonNode result, RefPath resultPath,
                RefPath outputPath, String next) implements State {
    }

    /** Exactly one of seconds, secondsPath, timestamp, timestampPath is set. */
    record Wait(String name, RefPath inputPath, RefPath outputPath, Long seconds, RefPath secondsPath,
                Instant timestamp, RefPath timestampPath, String next) implements State {
    }

    record Choice(String name, RefPath inputPath, RefPath outputPath, List<ChoiceRule.Branch> choices,
                  String defaultNext) implements State {
    }

    record Succeed(String name, RefPath inputPath, RefPath outputPath) implements State {
    }

    record Fail(String name, String error, String cause) implements State {
    }

    /** maxDelaySeconds is null when there is no cap. */
    record Retrier(List<String> errorEquals, int intervalSeconds, int maxAttempts, double backoffRate,
                   Integer maxDelaySeconds) {
        boolean matches(String error) {
            return matchesError(errorEquals, error);
        }

        /** Seconds before the n-th retry (1-based): Interval * BackoffRate^(n-1), capped by MaxDelaySeconds. */
        double delaySeconds(int n) {
            double delay = intervalSeconds * Math.pow(backoffRate, n - 1);
            return maxDelaySeconds == null ? delay : Math.min(delay, maxDelaySeconds);
        }
    }

    record Catcher(List<String> errorEquals, String next, RefPath resultPath) {
        boolean matches(String error) {
            return matchesError(errorEquals, error);
        }
    }

    /** Every error that reaches a retrier or catcher comes from a task, so States.TaskFailed matches them all. */
    static boolean matchesError(List<String> errorEquals, String error) {
        return errorEquals.contains(error) || errorEquals.contains(ALL) || errorEquals.contains("States.TaskFailed");
    }

    private final String startAt;
    private final Map<String, State> states;

    private AslMachine(String startAt, Map<String, State> states) {
        this.startAt = startAt;
        this.states = states;
    }

    /** Parses and validates; anything outside the supported subset throws AslException naming the state and field. */
    public static AslMachine load(String json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new AslException("Definition is not valid JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new AslException("Definition must be a JSON object");
        }
        checkFields(root, TOP_FIELDS, "Top level");
        JsonNode version = root.get("Version");
        if (version != null && !"1.0".equals(version.asText())) {
            throw new AslException("Top level: field 'Version' must be \"1.0\"");
        }
        JsonNode start = root.get("StartAt");
        if (start == null || !start.isTextual()) {
            throw new AslException("Top level: field 'StartAt' is required (a state name)");
        }
        JsonNode statesNode = root.get("States");
        if (statesNode == null || !statesNode.isObject() || statesNode.isEmpty()) {
            throw new AslException("Top level: field 'States' is required (an object of states)");
        }
        Map<String, State> states = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = statesNode.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            states.put(e.getKey(), parseState(e.getKey(), e.getValue()));
        }
        AslMachine machine = new AslMachine(start.asText(), Collections.unmodifiableMap(states));
        machine.checkTransitions();
        return machine;
    }

    /** Every Task's Resource string, for wiring. */
    public Set<String> taskResources() {
        Set<String> resources = new LinkedHashSet<>();
        states.values().forEach(s -> {
            if (s instanceof Task t) {
                resources.add(t.resource());
            }
        });
        return Collections.unmodifiableSet(resources);
    }

    public String startAt() {
        return startAt;
    }

    /** State names in definition order. */
    public Set<String> stateNames() {
        return states.keySet();
    }

    State state(String name) {
        return states.get(name);
    }

    private static State parseState(String name, JsonNode node) {
        String at = "State '" + name + "'";
        if (!node.isObject()) {
            throw new AslException(at + ": must be an object");
        }
        JsonNode typeNode = node.get("Type");
        if (typeNode == null || !typeNode.isTextual()) {
            throw new AslException(at + ": field 'Type' is required");
        }
        String type = typeNode.asText();
        List<String> allowed = FIELDS.get(type);
        if (allowed == null) {
            throw new AslException(at + ": state type '" + type + "' is not supported (supported: Task, Pass, Wait,"
                    + " Choice, Succeed, Fail)");
        }
        checkFields(node, allowed, at);
        return switch (type) {
            case "Task" -> new Task(name, requiredString(node, "Resource", at), path(node, "InputPath", at),
                    template(node, "Parameters", at), template(node, "ResultSelector", at), resultPath(node, at),
                    path(node, "OutputPath", at), retriers(node, at), catchers(node, at), next(node, at));
            case "Pass" -> new Pass(name, path(node, "InputPath", at), template(node, "Parameters", at),
                    node.get("Result"), resultPath(node, at), path(node, "OutputPath", at), next(node, at));
            case "Wait" -> wait(name, node, at);
            case "Choice" -> choice(name, node, at);
            case "Succeed" -> new Succeed(name, path(node, "InputPath", at), path(node, "OutputPath", at));
            default -> new Fail(name, optionalString(node, "Error", at), optionalString(node, "Cause", at));
        };
    }

    private static Wait wait(String name, JsonNode node, String at) {
        List<String> given = new ArrayList<>();
        for (String f : List.of("Seconds", "SecondsPath", "Timestamp", "TimestampPath")) {
            if (node.has(f)) {
                given.add(f);
            }
        }
        if (given.size() != 1) {
            throw new AslException(at + ": a Wait needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath;"
                    + " found " + given);
        }
        Long seconds = null;
        Instant timestamp = null;
        JsonNode s = node.get("Seconds");
        if (s != null) {
            if (!s.isIntegralNumber() || s.asLong() < 0) {
                throw new AslException(at + ": field 'Seconds' must be a non-negative integer");
            }
            seconds = s.asLong();
        }
        if (node.has("Timestamp")) {
            String text = requiredString(node, "Timestamp", at);
            timestamp = parseTimestamp(text);
            if (timestamp == null) {
                throw new AslException(at + ": field 'Timestamp' is not an RFC 3339 timestamp: " + text);
            }
        }
        return new Wait(name, path(node, "InputPath", at), path(node, "OutputPath", at), seconds,
                node.has("SecondsPath") ? requiredPath(node, "SecondsPath", at) : null, timestamp,
                node.has("TimestampPath") ? requiredPath(node, "TimestampPath", at) : null, next(node, at));
    }

    static Instant parseTimestamp(String text) {
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static Choice choice(String name, JsonNode node, String at) {
        JsonNode choices = node.get("Choices");
        if (choices == null || !choices.isArray() || choices.isEmpty()) {
            throw new AslException(at + ": field 'Choices' must be a non-empty array");
        }
        List<ChoiceRule.Branch> branches = new ArrayList<>();
        for (int i = 0; i < choices.size(); i++) {
            String where = at + ": Choices[" + i + "]";
            JsonNode rule = choices.get(i);
            ChoiceRule parsed = ChoiceRule.parse(rule, where, true);
            branches.add(new ChoiceRule.Branch(parsed, requiredString(rule, "Next", where)));
        }
        return new Choice(name, path(node, "InputPath", at), path(node, "OutputPath", at), List.copyOf(branches),
                optionalString(node, "Default", at));
    }

    private static List<Retrier> retriers(JsonNode node, String at) {
        List<Retrier> retriers = new ArrayList<>();
        JsonNode retry = node.get("Retry");
        for (int i = 0; retry != null && i < arraySize(retry, "Retry", at); i++) {
            String where = at + ": Retry[" + i + "]";
            JsonNode r = retry.get(i);
            checkFields(r, List.of("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds",
                    "JitterStrategy", "Comment"), where);
            JsonNode jitter = r.get("JitterStrategy");
            if (jitter != null && !"NONE".equals(jitter.asText())) {
                throw new AslException(where + ": field 'JitterStrategy' supports NONE only (random delays would make"
                        + " local runs unrepeatable), not " + jitter);
            }
            JsonNode rate = r.get("BackoffRate");
            if (rate != null && (!rate.isNumber() || rate.asDouble() < 1.0)) {
                throw new AslException(where + ": field 'BackoffRate' must be a number >= 1.0");
            }
            retriers.add(new Retrier(errorEquals(r, where, i == retry.size() - 1), intField(r, "IntervalSeconds", 1, 1,
                    where), intField(r, "MaxAttempts", 3, 0, where), rate == null ? 2.0 : rate.asDouble(),
                    r.has("MaxDelaySeconds") ? intField(r, "MaxDelaySeconds", 0, 1, where) : null));
        }
        return List.copyOf(retriers);
    }

    private static List<Catcher> catchers(JsonNode node, String at) {
        List<Catcher> catchers = new ArrayList<>();
        JsonNode katch = node.get("Catch");
        for (int i = 0; katch != null && i < arraySize(katch, "Catch", at); i++) {
            String where = at + ": Catch[" + i + "]";
            JsonNode c = katch.get(i);
            checkFields(c, List.of("ErrorEquals", "Next", "ResultPath", "Comment"), where);
            catchers.add(new Catcher(errorEquals(c, where, i == katch.size() - 1), requiredString(c, "Next", where),
                    resultPath(c, where)));
        }
        return List.copyOf(catchers);
    }

    private static List<String> errorEquals(JsonNode node, String at, boolean last) {
        JsonNode errors = node.get("ErrorEquals");
        if (errors == null || !errors.isArray() || errors.isEmpty()) {
            throw new AslException(at + ": field 'ErrorEquals' must be a non-empty array of error names");
        }
        List<String> names = new ArrayList<>();
        errors.forEach(e -> {
            if (!e.isTextual()) {
                throw new AslException(at + ": field 'ErrorEquals' must hold strings, not " + e);
            }
            names.add(e.asText());
        });
        if (names.contains(ALL) && (names.size() > 1 || !last)) {
            throw new AslException(at + ": 'States.ALL' must appear alone, in the last retrier or catcher");
        }
        return List.copyOf(names);
    }

    /** Every transition names a state, and every state can be reached from StartAt. */
    private void checkTransitions() {
        if (!states.containsKey(startAt)) {
            throw new AslException("Top level: 'StartAt' names no state: '" + startAt + "'");
        }
        Set<String> reached = new HashSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(startAt));
        while (!todo.isEmpty()) {
            String name = todo.pop();
            if (!reached.add(name)) {
                continue;
            }
            for (Map.Entry<String, String> t : targets(states.get(name)).entrySet()) {
                if (!states.containsKey(t.getValue())) {
                    throw new AslException("State '" + name + "': field '" + t.getKey() + "' names no state: '"
                            + t.getValue() + "'");
                }
                todo.push(t.getValue());
            }
        }
        if (reached.stream().map(states::get).noneMatch(AslMachine::ends)) {
            throw new AslException("Top level: no state ends the execution (needs End: true, Succeed or Fail)");
        }
        for (String name : states.keySet()) {
            if (!reached.contains(name)) {
                throw new AslException("State '" + name + "': cannot be reached from StartAt '" + startAt + "'");
            }
        }
    }

    /** Whether the state can end the execution: Succeed, Fail, or End: true. */
    private static boolean ends(State state) {
        return state instanceof Succeed || state instanceof Fail
                || (state instanceof Task t && t.next() == null) || (state instanceof Pass p && p.next() == null)
                || (state instanceof Wait w && w.next() == null);
    }

    /** The states a state can go to, keyed by the field that names them. */
    private static Map<String, String> targets(State state) {
        Map<String, String> targets = new LinkedHashMap<>();
        if (state instanceof Task t) {
            putIfSet(targets, "Next", t.next());
            for (int i = 0; i < t.catchers().size(); i++) {
                targets.put("Catch[" + i + "].Next", t.catchers().get(i).next());
            }
        } else if (state instanceof Pass p) {
            putIfSet(targets, "Next", p.next());
        } else if (state instanceof Wait w) {
            putIfSet(targets, "Next", w.next());
        } else if (state instanceof Choice c) {
            for (int i = 0; i < c.choices().size(); i++) {
                targets.put("Choices[" + i + "].Next", c.choices().get(i).next());
            }
            putIfSet(targets, "Default", c.defaultNext());
        }
        return targets;
    }

    private static void putIfSet(Map<String, String> map, String key, String value) {
        if (value != null) {
            map.put(key, value);
        }
    }

    /** Next (a state name) or End (true), exactly one; null means End. */
    private static String next(JsonNode node, String at) {
        JsonNode next = node.get("Next");
        JsonNode end = node.get("End");
        if (next != null && end != null) {
            throw new AslException(at + ": has both 'Next' and 'End'");
        }
        if (end != null) {
            if (!end.isBoolean() || !end.booleanValue()) {
                throw new AslException(at + ": field 'End' must be true (or give 'Next')");
            }
            return null;
        }
        if (next == null) {
            throw new AslException(at + ": needs 'Next' or \"End\": true");
        }
        return requiredString(node, "Next", at);
    }

    private static void checkFields(JsonNode node, List<String> allowed, String at) {
        if (!node.isObject()) {
            throw new AslException(at + ": must be an object");
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!allowed.contains(field)) {
                throw new AslException(at + ": field '" + field + "' is not supported (allowed here: "
                        + String.join(", ", allowed) + ")");
            }
        }
    }

    /** InputPath/OutputPath: absent means "$", JSON null means null (the effective value is then {}). */
    private static RefPath path(JsonNode node, String field, String at) {
        if (!node.has(field)) {
            return RefPath.parse("$");
        }
        return node.get(field).isNull() ? null : requiredPath(node, field, at);
    }

    private static RefPath requiredPath(JsonNode node, String field, String at) {
        String text = requiredString(node, field, at);
        if (text.startsWith("States.")) {
            throw new AslException(at + ": field '" + field + "': intrinsic function '" + text + "' is not supported");
        }
        try {
            return RefPath.parse(text);
        } catch (IllegalArgumentException e) {
            throw new AslException(at + ": field '" + field + "': " + e.getMessage());
        }
    }

    /** ResultPath: absent means "$", JSON null discards the result; otherwise field names only, in the input. */
    private static RefPath resultPath(JsonNode node, String at) {
        RefPath p = path(node, "ResultPath", at);
        if (p != null && (p.isContext() || p.steps().stream().anyMatch(s -> !(s instanceof String)))) {
            throw new AslException(at + ": field 'ResultPath' must be $ or $.field.field... (no $$, no [index])");
        }
        return p;
    }

    private static JsonNode template(JsonNode node, String field, String at) {
        JsonNode template = node.get(field);
        if (template == null) {
            return null;
        }
        try {
            Template.validate(template);
        } catch (IllegalArgumentException e) {
            throw new AslException(at + ": field '" + field + "': " + e.getMessage());
        }
        return template.deepCopy();
    }

    private static String requiredString(JsonNode node, String field, String at) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
            throw new AslException(at + ": field '" + field + "' is required (a non-empty string)");
        }
        return value.asText();
    }

    private static String optionalString(JsonNode node, String field, String at) {
        return node.has(field) ? requiredString(node, field, at) : null;
    }

    private static int arraySize(JsonNode node, String field, String at) {
        if (!node.isArray()) {
            throw new AslException(at + ": field '" + field + "' must be an array");
        }
        return node.size();
    }

    private static int intField(JsonNode node, String field, int dflt, int min, String at) {
        JsonNode value = node.get(field);
        if (value == null) {
            return dflt;
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt() || value.asInt() < min) {
            throw new AslException(at + ": field '" + field + "' must be an integer >= " + min);
        }
        return value.asInt();
    }
}
