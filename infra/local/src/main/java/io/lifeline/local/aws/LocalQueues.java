package io.lifeline.local.aws;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.runtime.Scheduler;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import io.lifeline.sweep.SweepHandler;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * SQS for Lifeline Local: the template's queues, and the Lambda event sources that read them (the functions' SQS
 * events). A function sends with the real SDK ({@code SendMessageBatch}, AWS's JSON protocol, on a loopback port;
 * answered with the MD5 digests the SDK checks); each message is held until it is due and then handed to the
 * functions whose SQS event names its queue, as the JSON Lambda's event source sends, at most the event's batch size
 * at a time, through the handler method the template names.
 *
 * <p>When a message is due: {@code DelaySeconds} after it was sent, as in SQS; a message that carries a
 * {@value SweepHandler#DUE_AT} attribute (ISO-8601, the sweep's queued sweeps do) is due at that instant, to the
 * millisecond, because Local's scaled sweep intervals go below SQS's whole second (in AWS such a message is delivered
 * up to a second after it, never before).
 *
 * <p>Two ways to deliver. Tests move their clock and call {@link #deliverDue()}: every message due on the functions'
 * clock goes, in due order. Lifeline Local calls {@link #startDelivering}: a background thread delivers each message
 * when it is due on a monotonic clock, and stamps its {@value SweepHandler#DUE_AT} the way Local's schedule stamps an
 * event's time ({@link Scheduler}): the functions' clock less how late the delivery is by the monotonic clock, or by
 * the front door's oldest waiting request if that waited longer. Every message one wake-up delivers counts as late as
 * the first it found due: a stall holds them all up, so the first sweep after a stall judges nobody, whichever message
 * it is. A function that fails is reported on stderr and its message dropped (SQS would offer it again after the
 * visibility timeout; for a sweep the next one is an interval away).
 */
public final class LocalQueues implements AutoCloseable {
    static final String ACCOUNT = "000000000000";
    static final String REGION = "us-east-1";

    /** A message held until it is due: {@code dueAt} on the functions' clock, {@code dueNanos} on the monotonic one. */
    public record Message(String queueId, String messageId, String body, Map<String, ObjectNode> attributes,
                          Instant sentAt, Instant dueAt, long dueNanos) {
    }

    private final Clock clock;
    private final LongSupplier nanoTime = System::nanoTime;
    private final Set<String> queueIds;
    private final List<SamTemplate.QueueEvent> events;
    private final HttpServer server;
    private final ExecutorService workers;
    private final List<Message> pending = new ArrayList<>();
    private volatile FunctionHost host;
    private volatile ScheduledExecutorService ticker;
    private volatile LongSupplier frontDoorWaitNanos = () -> 0;
    private final Map<String, Integer> delivered = new ConcurrentHashMap<>();

    public LocalQueues(SamTemplate template, Clock clock) throws IOException {
        this.clock = clock;
        this.queueIds = Set.copyOf(template.logicalIds("AWS::SQS::Queue"));
        this.events = template.queueEvents();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        workers = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "local-sqs");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(workers);
        server.createContext("/", AwsJsonEndpoint.serving("AmazonSQS.SendMessageBatch", "application/x-amz-json-1.0",
                "Lifeline Local's SQS only speaks SendMessageBatch", this::sendMessageBatch));
        server.start();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /**
     * The URL a function's environment gets for the queue ({@code !Ref} of an SQS queue is its URL). The SDK sends
     * to the client's endpoint and carries the URL in the request; the host resolves nowhere, so a client that ever
     * sent to it would fail loudly.
     */
    public static String queueUrl(String queueId) {
        return "http://sqs.local.invalid/" + ACCOUNT + "/" + queueId;
    }

    public SqsClient client() {
        return LocalClients.build(SqsClient.builder(), endpoint());
    }

    /** The functions the messages go to (the runtime's host). */
    public void deliverTo(FunctionHost functions) {
        this.host = functions;
    }

    /** Messages sent and not yet delivered, in due order. */
    public synchronized List<Message> pending() {
        return pending.stream().sorted(Comparator.comparing(Message::dueAt)).toList();
    }

    /** How many messages of {@code queueId} have been handed to its functions so far. */
    public int delivered(String queueId) {
        return delivered.getOrDefault(queueId, 0);
    }

    /**
     * Delivers every message due on the functions' clock, in due order, on the caller's thread; answers how many.
     * Messages the deliveries send that are already due go too.
     */
    public int deliverDue() {
        int count = 0;
        while (true) {
            List<Message> due = takeDue(m -> !m.dueAt().isAfter(clock.instant()));
            if (due.isEmpty()) {
                return count;
            }
            deliver(due, null);
            count += due.size();
        }
    }

    /**
     * From now on a background thread delivers each message when it is due on the monotonic clock; a delivery
     * counts as late by at least {@code frontDoorWaitNanos} (see {@link Scheduler}).
     */
    public synchronized void startDelivering(LongSupplier frontDoorWaitNanos) {
        this.frontDoorWaitNanos = frontDoorWaitNanos;
        this.ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "local-sqs-delivery");
            t.setDaemon(true);
            return t;
        });
        for (Message m : pending) {
            arm(m.dueNanos());
        }
    }

    private void arm(long dueNanos) {
        ScheduledExecutorService t = ticker;
        if (t == null) {
            return;
        }
        try {
            t.schedule(this::tick, Math.max(0, dueNanos - nanoTime.getAsLong()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
            // Local is shutting down.
        }
    }

    /** One wake-up of the delivery thread: everything due goes, each counted as late as the first one found due. */
    private void tick() {
        long woke = nanoTime.getAsLong();
        List<Message> due = takeDue(m -> m.dueNanos() - woke <= 0);
        if (due.isEmpty()) {
            return;
        }
        deliver(due, due.get(0).dueNanos());
    }

    private synchronized List<Message> takeDue(Predicate<Message> isDue) {
        List<Message> due = pending.stream().filter(isDue).sorted(Comparator.comparingLong(Message::dueNanos)
                .thenComparing(Message::dueAt)).toList();
        pending.removeAll(due);
        return due;
    }

    /**
     * Hands {@code due} to each consumer of its queue, batch by batch. {@code firstDueNanos}: null when delivering
     * on the test clock (attributes as sent); else the monotonic due time of the first message of this wake-up.
     */
    private void deliver(List<Message> due, Long firstDueNanos) {
        FunctionHost functions = host;
        if (functions == null) {
            throw new IllegalStateException("Lifeline Local's SQS has no functions to deliver to");
        }
        for (SamTemplate.QueueEvent event : events) {
            List<Message> mine = due.stream().filter(m -> m.queueId().equals(event.queueId())).toList();
            for (int from = 0; from < mine.size(); from += event.batchSize()) {
                List<Message> batch = mine.subList(from, Math.min(mine.size(), from + event.batchSize()));
                String json = Json.write(sqsEvent(batch, firstDueNanos));
                String requestId = UUID.randomUUID().toString();
                try {
                    functions.awaitRunning();
                    functions.invokeJson(event.functionId(), json, new LocalContext(event.functionId(), requestId));
                } catch (RuntimeException e) {
                    System.err.println(event.functionId() + " failed on its queue " + event.queueId() + ": " + e);
                }
                delivered.merge(event.queueId(), batch.size(), Integer::sum);
            }
        }
    }

    /** The SQS event Lambda's event source sends for {@code batch}. */
    private ObjectNode sqsEvent(List<Message> batch, Long firstDueNanos) {
        ObjectNode event = Json.object();
        ArrayNode records = event.putArray("Records");
        for (Message m : batch) {
            // The clock first, then the monotonic lateness: a stall between the two makes the stamp earlier, never
            // later, so it can only make the delivery look late, never on time.
            long wall = clock.millis();
            long now = nanoTime.getAsLong();
            ObjectNode r = records.addObject();
            r.put("messageId", m.messageId()).put("receiptHandle", m.messageId())
                    .put("body", m.body());
            r.putObject("attributes").put("ApproximateReceiveCount", "1")
                    .put("SentTimestamp", Long.toString(m.sentAt().toEpochMilli()))
                    .put("SenderId", ACCOUNT)
                    .put("ApproximateFirstReceiveTimestamp", Long.toString(wall));
            ObjectNode attributes = r.putObject("messageAttributes");
            m.attributes().forEach((name, a) -> {
                ObjectNode out = attributes.putObject(name);
                String value = a.path("StringValue").asText(null);
                if (name.equals(SweepHandler.DUE_AT) && firstDueNanos != null) {
                    long late = Math.max(Scheduler.lateMillis(m.dueNanos(), now, frontDoorWaitNanos.getAsLong()),
                            Scheduler.lateMillis(firstDueNanos, now));
                    value = Instant.ofEpochMilli(wall - late).toString();
                }
                out.put("stringValue", value);
                out.putArray("stringListValues");
                out.putArray("binaryListValues");
                out.put("dataType", a.path("DataType").asText());
            });
            r.put("md5OfBody", md5Hex(m.body().getBytes(StandardCharsets.UTF_8)));
            r.put("eventSource", "aws:sqs").put("eventSourceARN", "arn:aws:sqs:" + REGION + ":" + ACCOUNT + ":"
                    + m.queueId()).put("awsRegion", REGION);
        }
        return event;
    }

    private AwsJsonEndpoint.Answer sendMessageBatch(JsonNode request) {
        String url = request.path("QueueUrl").asText();
        String queueId = url.substring(url.lastIndexOf('/') + 1);
        if (!queueIds.contains(queueId) || !url.equals(queueUrl(queueId))) {
            return AwsJsonEndpoint.Answer.error("com.amazonaws.sqs#QueueDoesNotExist",
                    "The specified queue does not exist: " + url);
        }
        JsonNode entries = request.path("Entries");
        if (!entries.isArray() || entries.isEmpty() || entries.size() > 10) {
            return AwsJsonEndpoint.Answer.error("com.amazonaws.sqs#TooManyEntriesInBatchRequest",
                    "A batch holds 1 to 10 entries, not " + entries.size());
        }
        ObjectNode answer = Json.object();
        ArrayNode successful = answer.putArray("Successful");
        ArrayNode failed = answer.putArray("Failed");
        List<Message> accepted = new ArrayList<>();
        for (JsonNode e : entries) {
            String id = e.path("Id").asText();
            String body = e.path("MessageBody").asText(null);
            int delaySeconds = e.path("DelaySeconds").asInt(0);
            Map<String, ObjectNode> attributes = new LinkedHashMap<>();
            e.path("MessageAttributes").fields().forEachRemaining(a -> attributes.put(a.getKey(),
                    (ObjectNode) a.getValue()));
            String refused = body == null || body.isEmpty() ? "a message needs a body"
                    : delaySeconds < 0 || delaySeconds > 900 ? "DelaySeconds must be 0 to 900"
                    : attributes.values().stream().anyMatch(a -> !a.has("StringValue"))
                    ? "Local's SQS takes String and Number attributes only" : null;
            Instant sent = clock.instant();
            long sentNanos = nanoTime.getAsLong();
            long delayMillis = delaySeconds * 1000L;
            if (refused == null && attributes.containsKey(SweepHandler.DUE_AT)) {
                try {
                    Instant dueAt = Instant.parse(attributes.get(SweepHandler.DUE_AT).path("StringValue").asText());
                    delayMillis = Math.max(0, dueAt.toEpochMilli() - sent.toEpochMilli());
                } catch (DateTimeParseException bad) {
                    refused = SweepHandler.DUE_AT + " must be an ISO-8601 instant";
                }
            }
            if (refused != null) {
                failed.addObject().put("Id", id).put("SenderFault", true).put("Code", "InvalidParameterValue")
                        .put("Message", refused);
                continue;
            }
            String messageId = UUID.randomUUID().toString();
            accepted.add(new Message(queueId, messageId, body, attributes, sent, sent.plusMillis(delayMillis),
                    sentNanos + delayMillis * 1_000_000));
            ObjectNode ok = successful.addObject().put("Id", id).put("MessageId", messageId)
                    .put("MD5OfMessageBody", md5Hex(body.getBytes(StandardCharsets.UTF_8)));
            if (!attributes.isEmpty()) {
                ok.put("MD5OfMessageAttributes", attributesMd5(attributes));
            }
        }
        synchronized (this) {
            pending.addAll(accepted);
        }
        accepted.forEach(m -> arm(m.dueNanos()));
        return AwsJsonEndpoint.Answer.ok(answer);
    }

    /**
     * SQS's digest of a message's attributes (the one the SDK checks): for each attribute by name, its name, its
     * data type, the byte 1 and its string value, each string preceded by its UTF-8 length in 4 bytes.
     */
    static String attributesMd5(Map<String, ObjectNode> attributes) {
        MessageDigest md5 = md5();
        for (Map.Entry<String, ObjectNode> a : new TreeMap<>(attributes).entrySet()) {
            lengthAndBytes(md5, a.getKey());
            lengthAndBytes(md5, a.getValue().path("DataType").asText());
            md5.update((byte) 1);
            lengthAndBytes(md5, a.getValue().path("StringValue").asText());
        }
        return HexFormat.of().formatHex(md5.digest());
    }

    private static void lengthAndBytes(MessageDigest md5, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        md5.update(ByteBuffer.allocate(4).putInt(bytes.length).array());
        md5.update(bytes);
    }

    static String md5Hex(byte[] bytes) {
        return HexFormat.of().formatHex(md5().digest(bytes));
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no MD5 in this JVM", e);
        }
    }

    @Override
    public void close() {
        ScheduledExecutorService t = ticker;
        if (t != null) {
            t.shutdownNow();
        }
        server.stop(0);
        workers.shutdownNow();
    }
}
