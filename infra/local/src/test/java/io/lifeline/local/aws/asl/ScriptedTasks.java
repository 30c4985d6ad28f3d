package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A TaskInvoker that plays back scripted outcomes per resource (a JSON string or node to return, a TaskFailure or
 * RuntimeException to throw); the last outcome repeats. It records every call with the clock's time.
 */
final class ScriptedTasks implements TaskInvoker {
    record Call(String resource, JsonNode input, Instant at) {
    }

    private final Clock clock;
    private final Map<String, Deque<Object>> scripts = new HashMap<>();
    final List<Call> calls = new ArrayList<>();

    ScriptedTasks(Clock clock) {
        this.clock = clock;
    }

    ScriptedTasks on(String resource, Object... outcomes) {
        scripts.computeIfAbsent(resource, r -> new ArrayDeque<>()).addAll(List.of(outcomes));
        return this;
    }

    @Override
    public synchronized JsonNode invoke(String resource, JsonNode input) throws TaskFailure {
        calls.add(new Call(resource, input, clock.instant()));
        Deque<Object> script = scripts.get(resource);
        if (script == null || script.isEmpty()) {
            throw new IllegalStateException("no script for " + resource);
        }
        Object outcome = script.size() > 1 ? script.poll() : script.peek();
        if (outcome instanceof TaskFailure f) {
            throw f;
        }
        if (outcome instanceof RuntimeException x) {
            throw x;
        }
        return outcome instanceof JsonNode n ? n : Json.parse((String) outcome);
    }

    synchronized List<JsonNode> inputs(String resource) {
        return calls.stream().filter(c -> c.resource().equals(resource)).map(Call::input).toList();
    }

    synchronized int count(String resource) {
        return inputs(resource).size();
    }
}
