package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.agent.Subagents;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * What a host's batch entry says of its agent's running subagents: {@code "subagents": {"running": [{"id", "type",
 * "since"}], "more": n}}, the whole set, sent by the daemon only when it changes (absent: unchanged). Only ids, types
 * and times are read; anything else, a longer id, more than {@link Subagents#MAX} entries or a wrong type is refused
 * before the batch writes anything.
 */
final class SubagentRequests {
    private SubagentRequests() {
    }

    /** The entry's subagents, or null when it says nothing of them. */
    static Subagents of(JsonNode entry, String where) {
        JsonNode node = entry.get("subagents");
        if (node == null) {
            return null;
        }
        String at = where + ".subagents";
        if (!node.isObject()) {
            throw bad(at + " must be an object with 'running' and 'more'");
        }
        only(node, at, List.of("running", "more"));
        JsonNode running = node.path("running");
        if (!running.isArray() || running.size() > Subagents.MAX) {
            throw bad(at + ".running must be an array of at most " + Subagents.MAX + " subagents");
        }
        List<Subagents.Entry> list = new ArrayList<>();
        for (JsonNode one : running) {
            list.add(entry(one, at + ".running[" + list.size() + "]"));
        }
        JsonNode more = node.path("more");
        if (!more.isMissingNode() && (!more.canConvertToInt() || !more.isIntegralNumber() || more.asInt() < 0
                || more.asInt() > 10_000)) {
            throw bad(at + ".more must be an integer from 0 to 10000");
        }
        return new Subagents(list, more.isMissingNode() ? 0 : more.asInt());
    }

    private static Subagents.Entry entry(JsonNode one, String at) {
        if (!one.isObject()) {
            throw bad(at + " must be an object with 'id', 'type' and 'since'");
        }
        only(one, at, List.of("id", "type", "since"));
        String id = text(one, "id", at);
        String type = text(one, "type", at);
        String since = text(one, "since", at);
        if (since == null || since.length() > 40) {
            throw bad(at + ".since must be an ISO-8601 instant");
        }
        try {
            return new Subagents.Entry(id, type, Instant.parse(since));
        } catch (DateTimeParseException e) {
            throw bad(at + ".since must be an ISO-8601 instant");
        }
    }

    private static String text(JsonNode node, String field, String at) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw bad(at + "." + field + " must be a string");
        }
        return v.asText();
    }

    private static void only(JsonNode node, String at, List<String> allowed) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw bad(at + " has an unknown field '" + name + "'");
            }
        }
    }

    private static LifelineException bad(String message) {
        return LifelineException.badInput("INVALID_FIELD", "'" + message.replaceFirst(" ", "' "));
    }
}
