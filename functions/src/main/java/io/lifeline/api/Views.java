package io.lifeline.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStats;
import io.lifeline.agent.Recovery;
import io.lifeline.agent.Task;
import io.lifeline.agent.Transition;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;

/** How agents, tasks and transitions look on the wire. */
final class Views {
    /** Top-level checkpoint keys listed in its summary; the rest are only counted. */
    static final int MAX_SUMMARY_KEYS = 20;
    private Views() {
    }

    static ObjectNode agent(Agent a) {
        ObjectNode n = Json.object();
        n.put("agentId", a.agentId());
        n.put("teamName", a.team());
        n.put("name", a.name());
        n.put("role", a.role());
        Json.putIfPresent(n, "hostId", a.hostId());
        n.put("status", a.status().wire());
        n.put("alive", a.status().isAlive());
        Json.putTime(n, "heartbeatTs", a.heartbeatAt());
        Json.putTime(n, "deadline", a.deadline());
        n.put("consecutiveMisses", a.consecutiveMisses());
        n.put("staleAfterSeconds", a.staleAfter().toSeconds());
        n.put("graceMisses", a.graceMisses());
        Json.putIfPresent(n, "currentTaskId", a.currentTaskId());
        if (!a.stats().isEmpty()) {
            n.set("stats", stats(a.stats()));
        }
        Json.putIfPresent(n, "schedule", a.schedule());
        Json.putIfPresent(n, "timeZone", a.timeZone());
        Json.putTime(n, "pausedUntil", a.pausedUntil());
        if (a.waiting() != null && a.status().isAlive()) {
            ObjectNode w = Json.object().put("for", a.waiting().waiting().wire());
            Json.putTime(w, "since", a.waiting().since());
            n.set("waiting", w);
        }
        if (a.progress() != null && a.status().isAlive()) {
            Json.putTime(n, "lastProgressAt", a.progress().lastProgressAt());
        }
        if (a.stall() != null && a.status().isAlive()) {
            // Stalled (docs/liveness.md, "Progress and stalls"): in a turn with no progress past its threshold.
            n.set("stalled", Json.object().put("since", a.stall().since().toString())
                    .put("reason", a.stall().reason()));
        }
        if (a.parked() != null && a.status().isAlive()) {
            // Parked at its provider's usage limit (docs/liveness.md, "Parked at a usage limit"): alive until then.
            ObjectNode p = Json.object().put("until", a.parked().until().toString());
            Json.putIfPresent(p, "reason", a.parked().reason());
            Json.putTime(p, "since", a.parked().since());
            n.set("parked", p);
        }
        if (a.flappingSince() != null) {
            // Flagged flapping (docs/alerts-noise.md): its deaths and recoveries reach people as one notice.
            n.set("flapping", Json.object().put("since", a.flappingSince().toString()));
        }
        Json.putTime(n, "registeredAt", a.registeredAt());
        // Its from and trigger are on the item until the outbox publishes it; GET agent then reads its record.
        if (a.lastTransition() != null && a.lastTransition().from() != null && a.lastTransition().trigger() != null) {
            n.set("lastTransition", transition(a.lastTransition()));
        }
        return n;
    }

    static ObjectNode stats(AgentStats s) {
        ObjectNode n = Json.object();
        if (s.messagesProcessed() != null) {
            n.put("messagesProcessed", s.messagesProcessed());
        }
        if (s.toolCallsExecuted() != null) {
            n.put("toolCallsExecuted", s.toolCallsExecuted());
        }
        if (s.errorsEncountered() != null) {
            n.put("errorsEncountered", s.errorsEncountered());
        }
        if (s.uptimeSeconds() != null) {
            n.put("uptime", s.uptimeSeconds());
        }
        if (s.restartsLastHour() != null) {
            n.put("restartsLastHour", s.restartsLastHour());
        }
        return n;
    }

    static ObjectNode transition(Transition t) {
        ObjectNode n = Json.object();
        n.put("seq", t.seq());
        n.put("from", t.from().wire());
        n.put("to", t.to().wire());
        n.put("trigger", t.trigger().wire());
        Json.putIfPresent(n, "reason", t.reason());
        Json.putTime(n, "at", t.at());
        return n;
    }

    /**
     * What an operator needs to know of a saved checkpoint without its contents: when, how big, its top-level
     * keys, and whether the recovery route would offer it back now (and why not).
     */
    static ObjectNode checkpointSummary(JsonNode checkpoint, String storedJson, Recovery.Answer recovery) {
        ObjectNode n = Json.object();
        Json.putTime(n, "savedAt", recovery.savedAt());
        n.put("sizeBytes", storedJson.getBytes(StandardCharsets.UTF_8).length);
        n.put("type", checkpoint.getNodeType().name().toLowerCase());
        if (checkpoint.isObject()) {
            n.put("keyCount", checkpoint.size());
            ArrayNode keys = n.putArray("keys");
            checkpoint.fieldNames().forEachRemaining(k -> {
                if (keys.size() < MAX_SUMMARY_KEYS) {
                    keys.add(k);
                }
            });
        }
        n.put("offeredOnRecovery", recovery.available());
        Json.putIfPresent(n, "reason", recovery.reason());
        return n;
    }

    static ObjectNode task(Task t) {
        ObjectNode n = Json.object();
        n.put("taskId", t.taskId());
        Json.putIfPresent(n, "title", t.title());
        Json.putIfPresent(n, "description", t.description());
        n.put("status", t.status().wire());
        Json.putIfPresent(n, "assignee", t.assignee());
        Json.putTime(n, "createdAt", t.createdAt());
        Json.putTime(n, "claimedAt", t.claimedAt());
        Json.putTime(n, "completedAt", t.completedAt());
        Json.putIfPresent(n, "result", t.result());
        return n;
    }

    static <T> ArrayNode array(List<T> items, Function<T, ObjectNode> view) {
        ArrayNode arr = Json.MAPPER.createArrayNode();
        items.forEach(item -> arr.add(view.apply(item)));
        return arr;
    }
}
