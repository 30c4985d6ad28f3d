package io.lifeline.local.aws;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.template.SamTemplate;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.event.ruler.Machine;

/**
 * EventBridge for Lifeline Local: an endpoint that speaks PutEvents (the publisher uses the real SDK
 * client against it) and StartReplay, routing each event by the template's rules, matched with AWS's
 * event-ruler. An alerts-topic target prints the alert on the console; an API destination target is POSTed
 * the event (shaped by its InputTransformer, with its connection's header and body parameters); a state machine
 * target starts an execution. A target that fails is retried as its RetryPolicy says (an API destination's
 * 4xx other than 401, 407, 409 and 429 is not retried, as in EventBridge); one that fails past it goes to its
 * dead-letter queue ({@link #deadLetters()}, printed on the console) or, without one, is dropped. Every accepted
 * event is archived; {@link #startReplay} sends archived events again to chosen rules, as an archive replay does.
 * Tests can make it refuse chosen entries, as the real service sometimes does.
 */
public final class LocalEventBus implements AutoCloseable {
    /** An event the bus accepted, with the rules it matched, and when it arrived (wall clock, epoch ms). */
    public record Delivered(String eventId, String detailType, JsonNode event, List<String> rules,
                            long receivedAtMillis) {
    }

    /**
     * An event a target never took, as EventBridge writes it to the target's dead-letter queue: the event, and the
     * message attributes RULE_ARN, TARGET_ARN, ERROR_CODE, ERROR_MESSAGE and RETRY_ATTEMPTS.
     */
    public record DeadLetter(String queue, String ruleId, String ruleArn, String targetId, JsonNode event,
                             String errorCode, String errorMessage, int retryAttempts, Instant at) {
    }

    /** An event in the archive, with when the bus received it (a replay's window is of these times). */
    public record Archived(JsonNode event, Instant receivedAt) {
    }

    /** What one try of a target came to: taken, or failed (retryable or not) with EventBridge's error code. */
    private record Outcome(boolean ok, boolean retryable, String code, String message) {
        static final Outcome OK = new Outcome(true, false, null, null);

        static Outcome retry(String code, String message) {
            return new Outcome(false, true, code, message);
        }

        static Outcome fail(String code, String message) {
            return new Outcome(false, false, code, message);
        }
    }

    /** One event on its way to one target. */
    private record Delivery(String ruleId, SamTemplate.Target target, JsonNode event, Instant firstTry) {
    }

    /** The bus's name in Local: {@code lifeline-local}, in Local's account and region. */
    public static final String BUS_NAME = "lifeline-local";

    /** Local's rule ARNs: on the bus {@link #BUS_NAME}. */
    public static String ruleArn(String ruleId) {
        return "arn:aws:events:us-east-1:000000000000:rule/" + BUS_NAME + "/" + ruleId;
    }

    public static final String ARCHIVE_ARN = "arn:aws:events:us-east-1:000000000000:archive/"
            + BUS_NAME;

    private final HttpServer server;
    private final ExecutorService workers;
    private final Machine machine;
    private final Map<String, SamTemplate.Rule> rules = new HashMap<>();
    private final Clock clock;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private final List<Delivered> delivered = Collections.synchronizedList(new ArrayList<>());
    private final List<Archived> archive = Collections.synchronizedList(new ArrayList<>());
    private final List<DeadLetter> deadLetters = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger dropped = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ScheduledExecutorService retries;
    /** The wait before retry n is {@code base x 2^n}, at most {@code cap} (EventBridge's backoff, without jitter). */
    private volatile Duration retryBase = Duration.ofMillis(100);
    private volatile Duration retryCap = Duration.ofSeconds(5);
    private volatile Predicate<JsonNode> refuse = entry -> false;
    private volatile BiConsumer<String, JsonNode> stateMachines = (machine, input) -> {
        throw new NoStateMachinesException();
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
        server.createContext("/", AwsJsonEndpoint.serving(Map.of(
                "AWSEvents.PutEvents", r -> AwsJsonEndpoint.Answer.ok(putEvents(r)),
                "AWSEvents.StartReplay", this::startReplayRequest), "application/x-amz-json-1.1",
                "Lifeline Local's bus speaks PutEvents and StartReplay"));
        retries = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "local-event-bus-delivery");
            t.setDaemon(true);
            return t;
        });
        server.start();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    public EventBridgeClient client() {
        return LocalClients.build(EventBridgeClient.builder(), endpoint());
    }

    /** Where state machine targets start their executions: (state machine logical id, input). */
    public void startStateMachinesWith(BiConsumer<String, JsonNode> starter) {
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

    /** The waits between a target's retries: {@code base}, doubling, at most {@code cap} (tests shorten them). */
    public void retryBackoff(Duration base, Duration cap) {
        this.retryBase = base;
        this.retryCap = cap;
    }

    /** Every event a target gave up on and that went to its dead-letter queue, oldest first. */
    public List<DeadLetter> deadLetters() {
        synchronized (deadLetters) {
            return List.copyOf(deadLetters);
        }
    }

    /** Empties the dead-letter queues (as {@code aws sqs purge-queue} does once their events were replayed). */
    public void purgeDeadLetters() {
        deadLetters.clear();
    }

    /** Events a target gave up on that had no dead-letter queue: lost, as EventBridge drops them. */
    public int dropped() {
        return dropped.get();
    }

    /** Deliveries still trying (a first try or a retry not yet settled). */
    public int inFlight() {
        return inFlight.get();
    }

    /** The archive: every accepted event, oldest first. */
    public List<Archived> archive() {
        synchronized (archive) {
            return List.copyOf(archive);
        }
    }

    /**
     * An archive replay: every archived event the bus received in [{@code from}, {@code to}) goes again to the
     * rules named in {@code ruleIds} (every rule when empty) that match it, with {@code replay-name} set, through
     * the same retries and dead-letter queues. Answers how many (event, rule) deliveries it started.
     */
    public int startReplay(String name, Instant from, Instant to, List<String> ruleIds) {
        if (name == null || name.isBlank() || !from.isBefore(to)) {
            throw new IllegalArgumentException("a replay needs a name and a start before its end");
        }
        for (String id : ruleIds) {
            if (!rules.containsKey(id)) {
                throw new IllegalArgumentException("no rule " + id + " on this bus; its rules are " + rules.keySet());
            }
        }
        int started = 0;
        for (Archived a : archive()) {
            if (a.receivedAt().isBefore(from) || !a.receivedAt().isBefore(to)) {
                continue;
            }
            ObjectNode event = ((ObjectNode) a.event()).deepCopy().put("replay-name", name);
            List<String> matched;
            try {
                matched = machine.rulesForJSONEvent(Json.write(event));
            } catch (Exception e) {
                throw new IllegalStateException("event-ruler could not read " + event, e);
            }
            for (String ruleId : matched) {
                if (!ruleIds.isEmpty() && !ruleIds.contains(ruleId)) {
                    continue;
                }
                for (SamTemplate.Target t : rules.get(ruleId).targets()) {
                    deliver(ruleId, t, event);
                    started++;
                }
            }
        }
        return started;
    }

    /** StartReplay as the SDK and {@code aws events start-replay --endpoint-url} send it. */
    private AwsJsonEndpoint.Answer startReplayRequest(JsonNode r) {
        List<String> ruleIds = new ArrayList<>();
        for (JsonNode arn : r.path("Destination").path("FilterArns")) {
            String text = arn.asText();
            ruleIds.add(text.substring(text.lastIndexOf('/') + 1));
        }
        String name = r.path("ReplayName").asText(null);
        if (!r.has("EventStartTime") || !r.has("EventEndTime")) {
            return AwsJsonEndpoint.Answer.error("ValidationException", "EventStartTime and EventEndTime are required");
        }
        if (!ARCHIVE_ARN.equals(r.path("EventSourceArn").asText())) {
            return AwsJsonEndpoint.Answer.error("ResourceNotFoundException", "Local's one archive is " + ARCHIVE_ARN);
        }
        Instant from = Instant.ofEpochMilli((long) (r.get("EventStartTime").asDouble() * 1000));
        Instant to = Instant.ofEpochMilli((long) (r.get("EventEndTime").asDouble() * 1000));
        try {
            int started = startReplay(name, from, to, ruleIds);
            System.out.println("[replay] " + name + ": " + started + " deliveries from the archive");
        } catch (IllegalArgumentException e) {
            return AwsJsonEndpoint.Answer.error("ValidationException", e.getMessage());
        }
        return AwsJsonEndpoint.Answer.ok(Json.object()
                .put("ReplayArn", "arn:aws:events:us-east-1:000000000000:replay/" + name)
                .put("State", "STARTING").put("ReplayStartTime", clock.millis() / 1000.0));
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
            archive.add(new Archived(event, clock.instant()));
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
        } catch (JsonProcessingException e) {
            event.set("detail", Json.object());
        }
        return event;
    }

    /**
     * Sends {@code event} to one target: a topic or a state machine at once (in the PutEvents call, as the tests
     * expect of a drained pump), an endpoint on a delivery thread; a failed try is retried on a delivery thread.
     */
    private void deliver(String ruleId, SamTemplate.Target t, JsonNode event) {
        Delivery d = new Delivery(ruleId, t, event, clock.instant());
        inFlight.incrementAndGet();
        if (t.endpoint() != null) {
            retries.execute(() -> attempt(d, 0));
        } else {
            attempt(d, 0);
        }
    }

    /** Try {@code n} (0 is the first) of a delivery, and what follows from its outcome. */
    private void attempt(Delivery d, int n) {
        Outcome o;
        try {
            o = invoke(d);
        } catch (RuntimeException e) {
            o = Outcome.retry("INTERNAL_ERROR", e.toString());
        }
        if (o.ok()) {
            inFlight.decrementAndGet();
            return;
        }
        SamTemplate.RetryPolicy policy = d.target().retry();
        boolean tooOld = !clock.instant().isBefore(d.firstTry().plus(policy.maximumEventAge()));
        if (o.retryable() && n < policy.maximumRetryAttempts() && !tooOld) {
            long wait = Math.min(retryCap.toNanos(), retryBase.toNanos() << Math.min(n, 30));
            try {
                retries.schedule(() -> attempt(d, n + 1), Math.max(wait, 0), TimeUnit.NANOSECONDS);
                return;
            } catch (RejectedExecutionException closed) {
                // the bus is closing: the delivery ends here, as below
            }
        }
        giveUp(d, o, n);
        inFlight.decrementAndGet();
    }

    private void giveUp(Delivery d, Outcome o, int retries) {
        String where = "rule " + d.ruleId() + " target " + d.target().id() + " (" + d.target().destination() + ")";
        String event = d.event().path("detail-type").asText() + " " + d.event().path("id").asText();
        if (d.target().deadLetterQueue() == null) {
            dropped.incrementAndGet();
            System.err.println("[dropped] " + where + ": " + o.code() + " " + o.message() + "; " + event
                    + " is lost (the target has no dead-letter queue)");
            return;
        }
        deadLetters.add(new DeadLetter(d.target().deadLetterQueue(), d.ruleId(), ruleArn(d.ruleId()), d.target().id(),
                d.event(), o.code(), o.message(), retries, clock.instant()));
        System.err.println("[dead-letter] " + where + ": " + o.code() + " " + o.message() + " after " + retries
                + " retries; " + event + " is in " + d.target().deadLetterQueue() + ". Replay it once the target is "
                + "fixed: aws events start-replay --endpoint-url " + endpoint() + " --event-source-arn " + ARCHIVE_ARN
                + " --destination Arn=...,FilterArns=" + ruleArn(d.ruleId()) + " --event-start-time ... --event-end-time ...");
    }

    /** One try: the topic prints, a state machine starts, an endpoint is POSTed (EventBridge's 5 s timeout). */
    private Outcome invoke(Delivery d) {
        SamTemplate.Target t = d.target();
        JsonNode event = d.event();
        JsonNode detail = event.path("detail");
        if (t.topic() != null) {
            System.out.println("[alert] " + event.path("detail-type").asText() + " team=" + detail.path("team").asText()
                    + (detail.has("agentId") ? " agent=" + detail.path("agentId").asText() : "")
                    + (detail.has("from") ? " " + detail.path("from").asText() + " -> " + detail.path("to").asText() : "")
                    + (detail.has("reason") ? " (" + detail.path("reason").asText() + ")" : "")
                    + (detail.has("staleAgents") ? " stale=" + detail.path("staleAgents").asText() + "/"
                            + detail.path("aliveAgents").asText() : "")
                    + "  [rule " + d.ruleId() + "]");
            return Outcome.OK;
        }
        if (t.stateMachine() != null) {
            try {
                stateMachines.accept(t.stateMachine(), transform(t, event));
                return Outcome.OK;
            } catch (NoStateMachinesException e) {
                return Outcome.fail("NO_RESOURCE", e.getMessage());
            }
        }
        if (t.endpoint() == null || t.endpoint().isBlank()) {
            return Outcome.fail("NO_RESOURCE", "the API destination has no endpoint");
        }
        JsonNode body = transform(t, event);
        if (body.isObject() && !t.bodyParameters().isEmpty()) {
            ObjectNode merged = ((ObjectNode) body).deepCopy();
            t.bodyParameters().forEach(merged::put);
            body = merged;
        }
        HttpRequest.Builder post = HttpRequest.newBuilder(URI.create(t.endpoint())).timeout(Duration.ofSeconds(5))
                .header("Content-Type", "application/json");
        t.headers().forEach(post::header);
        HttpResponse<Void> answer;
        try {
            answer = http.send(post.POST(HttpRequest.BodyPublishers.ofString(Json.write(body))).build(),
                    HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            return Outcome.retry("CONNECTION_FAILURE", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.fail("INTERNAL_ERROR", "interrupted");
        }
        return apiDestinationOutcome(answer.statusCode());
    }

    /** EventBridge's rule for API destinations: 2xx taken; 401, 407, 409, 429 and 5xx retried; the rest not. */
    static Outcome apiDestinationOutcome(int status) {
        if (status >= 200 && status < 300) {
            return Outcome.OK;
        }
        String message = "the endpoint answered HTTP " + status;
        if (status == 401 || status == 407 || status == 409 || status == 429 || status >= 500) {
            return Outcome.retry("ERROR_FROM_TARGET", message);
        }
        return Outcome.fail("ERROR_FROM_TARGET", message);
    }

    /** No Step Functions stand-in is wired: a state machine target has nothing to start (not worth a retry). */
    static final class NoStateMachinesException extends IllegalStateException {
        NoStateMachinesException() {
            super("no state machines wired to the bus");
        }
    }

    /**
     * EventBridge's InputTransformer for the templates we write: each {@code <key>} in the template becomes
     * the value at its path, a string's text (the template quotes it) or a number as it is.
     */
    public static JsonNode transform(SamTemplate.Target t, JsonNode event) {
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
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException("InputTemplate of " + t.id() + " did not give JSON: " + text, ex);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        workers.shutdownNow();
        retries.shutdownNow();
    }
}
