package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.testing.MutableClock;
import java.time.Instant;
import java.util.List;

/** Test helpers: JSON literals, and reading an execution's history. */
final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    /** A machine definition from its StartAt and the body of its States object. */
    static String machine(String startAt, String states) {
        return "{\"StartAt\": \"" + startAt + "\", \"States\": {" + states + "}}";
    }

    static List<String> types(Execution e) {
        return e.history().stream().map(HistoryEvent::type).toList();
    }

    static List<HistoryEvent> events(Execution e, String type) {
        return e.history().stream().filter(h -> h.type().equals(type)).toList();
    }

    /** Drives every execution to its end by jumping the clock to each wake-up; returns the number of jumps. */
    static int runToEnd(AslRunner runner, MutableClock clock) {
        int jumps = 0;
        while (runner.nextWakeUp().isPresent()) {
            Instant next = runner.nextWakeUp().get();
            clock.set(next);
            runner.runDue();
            if (++jumps > 1000) {
                throw new AssertionError("executions never finish");
            }
        }
        return jumps;
    }
}
