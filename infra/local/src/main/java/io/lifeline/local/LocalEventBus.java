package io.lifeline.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.support.Json;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.event.ruler.Machine;

/**
 * EventBridge for Lifeline Local: an endpoint that speaks PutEvents (the publisher uses the real SDK
 * client against it), routing each event by the template's rules, matched with AWS's event-ruler. An
 * alerts-topic target prints the alert on the console; an API destination target is POSTed the event.
 * Tests can make it refuse chosen entries, as the real service sometimes does.
 */
public final class LocalEventBus implements AutoCloseable {
    /** An event the bus accepted, with the rules it matched, and when it arrived (wall clock, epoch ms). */
    public record Delivered(String eventId, String detailType, JsonNode event, List<String> rules,
                            long receivedAtMillis) {
    }

    private final HttpServer server;
    private final ExecutorService workers;
    private final Machine machine;
    private final Map<String, SamTemplate.Rule> rules = new java.util.HashMap<>();
    private final Clock clock;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private final List<Delivered> delivered = Collections.synchronizedList(new ArrayList<>());
    private volatile Predicate<JsonNode> refuse = entry -> false;
    private volatile java.util.function.BiConsumer<String, JsonNode> stateMachines = (machine, input) -> {
        throw new IllegalStateException("no state machines wired to the bus");
    };

    public LocalEventBus(List<SamTemplate.Rule> templateRules, Clock clock) throws IOException {
        this.clock = clock;
        this.machine = Machine.builder().build();
        for (SamTemplate.Rule r : templateRules) {
            machine.addRule(r.logicalId(), r.eventPattern());
            rules.put(r.logicalId(), r);
        }
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        workers = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "local-event-bus");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(workers);
        server.createContext("/", AwsJsonEndpoint.serving("AWSEvents.PutEvents", "application/x-amz-json-1.1",
                "Lifeline Local's bus only speaks PutEvents", r -> AwsJsonEndpoint.Answer.ok(putEvents(r))));
        server.start();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    public EventBridgeClient client() {
        return LocalClients.build(EventBridgeClient.builder(), endpoint());
    }

    /** Where state machine targets start their executions: (state machine logical id, input). */
    public void startStateMachinesWith(java.util.function.BiConsumer<String, JsonNode> starter) {
        this.stateMachines = starter;
    }

    /** Makes the bus refuse entries (as PutEvents' per-entry failures) while {@code test} says so. */
    public void refuseWhen(Predicate<JsonNode> test) {
        this.refuse = test;
    }

    /** Every event accepted so far, oldest first. */
    public List<Delivered> delivered() {
        synchronized (delivered) {
            return List.copyOf(delivered);
        }
    }

    private ObjectNode putEvents(JsonNode request) {
        ArrayNode results = Json.MAPPER.createArrayNode();
        int failed = 0;
        for (JsonNode entry : request.path("Entries")) {
            if (refuse.test(entry)) {
                failed++;
                results.add(Json.object().put("ErrorCode", "InternalFailure")
                        .put("ErrorMessage", "refused by Lifeline Local (fault injection)"));
                continue;
            }
            String id = UUID.randomUUID().toString();
            ObjectNode event = envelope(id, entry);
            List<String> matched;
            try {
                matched = machine.rulesForJSONEvent(Json.write(event));
            } catch (Exception e) {
                throw new IllegalStateException("event-ruler could not read " + event, e);
            }
            delivered.add(new Delivered(id, event.path("detail-type").asText(), event, matched,
                    System.currentTimeMillis()));
            for (String ruleId : matched) {
                for (SamTemplate.Target t : rules.get(ruleId).targets()) {
                    deliver(ruleId, t, event);
                }
            }
            results.add(Json.object().put("EventId", id));
        }
        return Json.object().put("FailedEntryCount", failed).set("Entries", results);
    }

    private ObjectNode envelope(String id, JsonNode entry) {
        Instant time = entry.has("Time") ? Instant.ofEpochMilli((long) (entry.get("Time").asDouble() * 1000))
                : clock.instant();
        ObjectNode event = Json.object().put("version", "0").put("id", id)
                .put("detail-type", entry.path("DetailType").asText()).put("source", entry.path("Source").asText())
                .put("account", "000000000000").put("time", time.toString()).put("region", "us-east-1");
        event.set("resources", Json.MAPPER.createArrayNode());
        try {
            event.set("detail", Json.parse(entry.path("Detail").asText("{}")));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            event.set("detail", Json.object());
        }
        return event;
    }

    private void deliver(String ruleId, SamTemplate.Target t, ObjectNode event) {
        JsonNode d = event.path("detail");
        if (t.topic() != null) {
            System.out.println("[alert] " + event.path("detail-type").asText() + " team=" + d.path("team").asText()
                    + (d.has("agentId") ? " agent=" + d.path("agentId").asText() : "")
                    + (d.has("from") ? " " + d.path("from").asText() + " -> " + d.path("to").asText() : "")
                    + (d.has("reason") ? " (" + d.path("reason").asText() + ")" : "")
                    + (d.has("staleAgents") ? " stale=" + d.path("staleAgents").asText() + "/"
                            + d.path("aliveAgents").asText() : "")
                    + "  [rule " + ruleId + "]");
        } else if (t.stateMachine() != null) {
            try {
                stateMachines.accept(t.stateMachine(), transform(t, event));
            } catch (RuntimeException e) {
                System.err.println("rule " + ruleId + " could not start " + t.stateMachine() + ": " + e);
            }
        } else if (t.endpoint() != null && !t.endpoint().isBlank()) {
            HttpRequest post = HttpRequest.newBuilder(URI.create(t.endpoint())).timeout(Duration.ofSeconds(5))
                    .header("Content-Type", "application/json").header("X-Lifeline-Source", "lifeline")
                    .POST(HttpRequest.BodyPublishers.ofString(Json.write(event))).build();
            http.sendAsync(post, HttpResponse.BodyHandlers.discarding()).exceptionally(e -> {
                System.err.println("webhook " + t.endpoint() + " failed: " + e);
                return null;
            });
        }
    }

    /**
     * EventBridge's InputTransformer for the templates we write: each {@code <key>} in the template becomes
     * the value at its path, a string's text (the template quotes it) or a number as it is.
     */
    static JsonNode transform(SamTemplate.Target t, JsonNode event) {
        if (t.inputTemplate() == null) {
            return event;
        }
        String text = t.inputTemplate();
        for (Map.Entry<String, String> e : t.inputPaths().entrySet()) {
            JsonNode value = event;
            for (String part : e.getValue().substring(2).split("\\.")) {
                value = value.path(part);
            }
            String replacement = value.isTextual() ? Json.write(value).substring(1, Json.write(value).length() - 1)
                    : value.isMissingNode() ? "null" : Json.write(value);
            text = text.replace("<" + e.getKey() + ">", replacement);
        }
        try {
            return Json.parse(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException ex) {
            throw new IllegalStateException("InputTemplate of " + t.id() + " did not give JSON: " + text, ex);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        workers.shutdownNow();
    }
}
