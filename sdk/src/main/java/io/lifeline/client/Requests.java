package io.lifeline.client;

import static io.lifeline.client.ApiTransport.MAPPER;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.model.BatchEntry;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The request bodies and query strings {@link LifelineClient} sends, built apart from the routes that send them. */
final class Requests {
    private Requests() {
    }

    static List<ObjectNode> batchBody(List<BatchEntry> entries, Map<String, Long> localBeatAgesMs) {
        return batchBody(entries, localBeatAgesMs, Map.of());
    }

    /** A host's report of an agent's running subagents: ids, types and since when only. */
    private static void subagents(ObjectNode n, BatchEntry.Subagents s) {
        ArrayNode running = n.putArray("running");
        for (BatchEntry.Running r : s.running()) {
            ObjectNode one = running.addObject().put("id", r.id());
            if (r.type() != null) {
                one.put("type", r.type());
            }
            one.put("since", r.since().toString());
        }
        n.put("more", s.more());
    }

    /**
     * A batch's entries as sent: at most {@link LifelineClient#MAX_BATCH}, each with its agent's local beat age and
     * stall judgement when given.
     */
    static List<ObjectNode> batchBody(List<BatchEntry> entries, Map<String, Long> localBeatAgesMs,
                                      Map<String, Boolean> stalled) {
        if (entries.size() > LifelineClient.MAX_BATCH) {
            throw new IllegalArgumentException("A batch holds at most " + LifelineClient.MAX_BATCH
                    + " heartbeats; got " + entries.size());
        }
        List<ObjectNode> list = new ArrayList<>();
        for (BatchEntry e : entries) {
            ObjectNode n = MAPPER.createObjectNode().put("agentId", e.agentId());
            if (e.heartbeat() != null) {
                n.setAll((ObjectNode) MAPPER.valueToTree(e.heartbeat()));
            }
            if (e.waiting() != null) {
                n.put("waiting", e.waiting());
            }
            if (e.inTurn() != null) {
                n.put("inTurn", e.inTurn());
            }
            if (e.parked() != null && !e.parked().parked()) {
                n.put("parked", false);
            } else if (e.parked() != null) {
                ObjectNode p = n.putObject("parked");
                if (e.parked().until() != null) {
                    p.put("until", e.parked().until().toString());
                }
                if (e.parked().reason() != null) {
                    p.put("reason", e.parked().reason());
                }
            }
            Long age = localBeatAgesMs == null ? null : localBeatAgesMs.get(e.agentId());
            if (age != null) {
                n.put("localBeatAgeMs", Math.max(0, age));
            }
            Boolean stall = stalled == null ? null : stalled.get(e.agentId());
            if (stall != null) {
                n.put("stalled", stall);
            }
            if (e.subagents() != null && localBeatAgesMs != null) {
                subagents(n.putObject("subagents"), e.subagents());
            }
            list.add(n);
        }
        return list;
    }

    /** The body of a host's report that its agent failed ({@code stallReason} null: a crash). */
    static Map<String, Object> failBody(String reason, Duration restartIn, Long restartsLastHour,
                                        String stallReason) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (stallReason != null) {
            body.put("stalled", true);
            body.put("stallReason", stallReason);
        }
        if (reason != null) {
            body.put("reason", reason);
        }
        if (restartIn != null) {
            body.put("restartInSeconds", (restartIn.toMillis() + 999) / 1000);
        }
        if (restartsLastHour != null) {
            body.put("restartsLastHour", restartsLastHour);
        }
        return body;
    }

    /** The body of a host's report that it gave up restarting its agent. */
    static Map<String, Object> giveUpBody(String reason, Long restartsLastHour) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (reason != null) {
            body.put("reason", reason);
        }
        body.put("giveUp", true);
        if (restartsLastHour != null) {
            body.put("restartsLastHour", restartsLastHour);
        }
        return body;
    }

    static Map<String, Object> reasonBody(String reason) {
        return reason == null ? null : Map.of("reason", reason);
    }

    static String enc(String s) {
        return URLEncoder.encode(Objects.requireNonNull(s), StandardCharsets.UTF_8).replace("+", "%20");
    }

    static String query(Object... pairs) {
        StringBuilder q = new StringBuilder();
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] != null) {
                q.append(q.length() == 0 ? '?' : '&').append(pairs[i]).append('=').append(enc(pairs[i + 1].toString()));
            }
        }
        return q.toString();
    }
}
