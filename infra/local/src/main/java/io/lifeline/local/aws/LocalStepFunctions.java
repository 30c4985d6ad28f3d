package io.lifeline.local.aws;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.lifeline.local.aws.asl.AslMachine;
import io.lifeline.local.aws.asl.AslRunner;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.aws.asl.TaskFailure;
import io.lifeline.local.runtime.FunctionHost;
import io.lifeline.local.runtime.LocalContext;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.sfn.SfnClient;

/**
 * Step Functions for Lifeline Local: the template's state machines, run by the ASL interpreter from the
 * very files template.yaml names, their Task resources mapped to the functions the template wires to them (and
 * CloudWatch's PutMetricData, the one AWS SDK integration the flows call).
 * It speaks StartExecution over HTTP, so the functions use the real SDK client against it, and starts
 * executions for EventBridge rule targets. Waits run at the real rate times {@code timeScale}.
 */
public final class LocalStepFunctions implements AutoCloseable {
    private static final long TICK_MILLIS = 50;
    /** The one AWS SDK integration the flows use: their Catch's count of a fault. */
    static final String PUT_METRIC_DATA = "arn:aws:states:::aws-sdk:cloudwatch:putMetricData";

    private final Map<String, AslRunner> runners = new HashMap<>();
    private final HttpServer server;
    private final ScheduledExecutorService ticker;

    public LocalStepFunctions(List<SamTemplate.StateMachine> machines, FunctionHost host, Clock clock,
                              double timeScale, boolean tick) throws IOException {
        for (SamTemplate.StateMachine m : machines) {
            AslMachine machine = AslMachine.load(m.definition());
            runners.put(arn(m.logicalId()), new AslRunner(machine, (resource, input) -> invoke(host, resource, input),
                    clock, timeScale));
        }
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", AwsJsonEndpoint.serving("AWSStepFunctions.StartExecution",
                "application/x-amz-json-1.0", "Lifeline Local's Step Functions speaks StartExecution only",
                this::startExecution));
        server.start();
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "local-step-functions");
            t.setDaemon(true);
            return t;
        });
        if (tick) {
            ticker.scheduleWithFixedDelay(this::runDue, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** The ARN Local gives a state machine. */
    public static String arn(String logicalId) {
        return "arn:aws:states:us-east-1:000000000000:stateMachine:" + logicalId;
    }

    private static JsonNode invoke(FunctionHost host, String resource, JsonNode input) throws TaskFailure {
        if (PUT_METRIC_DATA.equals(resource)) {
            return putMetricData(input);
        }
        String prefix = FunctionHost.functionArn("");
        if (!resource.startsWith(prefix)) {
            throw new TaskFailure("States.TaskFailed", "Local cannot run the resource " + resource);
        }
        String function = resource.substring(prefix.length());
        RequestHandler<Map<String, Object>, Object> handler = host.handler(function);
        Map<String, Object> in = Json.MAPPER.convertValue(input, new TypeReference<>() { });
        Object out;
        try {
            // Under the function's reserved concurrency, as Lambda runs it; a throttle is the error a Task sees.
            out = host.invoke(function, () -> handler.handleRequest(in,
                    new LocalContext(resource, UUID.randomUUID().toString())));
        } catch (FunctionHost.ThrottledException e) {
            throw new TaskFailure("Lambda.TooManyRequestsException", e.getMessage());
        }
        return Json.MAPPER.valueToTree(out);
    }

    /**
     * CloudWatch's PutMetricData as a flow's Task calls it (the flows' Catch counts a fault this way, no function
     * needed): each datum becomes one line in the Embedded Metric Format in the functions' log, where Local's metrics
     * (LocalMetrics) read it as they read the functions' own. Answers PutMetricData's empty result.
     */
    static JsonNode putMetricData(JsonNode input) throws TaskFailure {
        String namespace = input.path("Namespace").asText("");
        if (namespace.isEmpty() || !input.path("MetricData").isArray()) {
            throw new TaskFailure("CloudWatch.InvalidParameterValueException", "Namespace and MetricData are required");
        }
        for (JsonNode datum : input.path("MetricData")) {
            String name = datum.path("MetricName").asText("");
            if (name.isEmpty() || !datum.path("Value").isNumber()) {
                throw new TaskFailure("CloudWatch.InvalidParameterValueException", "a datum needs MetricName and Value");
            }
            ObjectNode line = Log.line("INFO", "putMetricData").put(name, datum.path("Value").asDouble());
            ObjectNode aws = line.putObject("_aws").put("Timestamp", System.currentTimeMillis());
            ObjectNode directive = aws.putArray("CloudWatchMetrics").addObject().put("Namespace", namespace);
            ArrayNode dimensions = directive.putArray("Dimensions").addArray();
            for (JsonNode d : datum.path("Dimensions")) {
                dimensions.add(d.path("Name").asText());
                line.put(d.path("Name").asText(), d.path("Value").asText());
            }
            directive.putArray("Metrics").addObject().put("Name", name).put("Unit", datum.path("Unit").asText("None"));
            Log.emit(line);
        }
        return Json.object();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    public SfnClient client() {
        return LocalClients.build(SfnClient.builder(), endpoint());
    }

    /** Starts an execution of the state machine with this ARN; a duplicate name is refused. */
    public Execution start(String stateMachineArn, String name, JsonNode input) {
        AslRunner runner = runners.get(stateMachineArn);
        if (runner == null) {
            throw new IllegalArgumentException("No state machine " + stateMachineArn);
        }
        return runner.start(name == null ? UUID.randomUUID().toString() : name, input);
    }

    /** Resumes every execution whose wait is over; the background tick does this every 50 ms. */
    public int runDue() {
        int steps = 0;
        for (AslRunner r : runners.values()) {
            try {
                steps += r.runDue();
            } catch (RuntimeException e) {
                System.err.println("state machine runner: " + e);
            }
        }
        return steps;
    }

    public Optional<Execution> execution(String name) {
        return runners.values().stream().map(r -> r.execution(name)).flatMap(Optional::stream).findFirst();
    }

    public List<Execution> executions() {
        return runners.values().stream().flatMap(r -> r.executions().stream()).toList();
    }

    private AwsJsonEndpoint.Answer startExecution(JsonNode request) throws IOException {
        String machine = request.path("stateMachineArn").asText();
        String name = request.hasNonNull("name") ? request.get("name").asText() : null;
        try {
            JsonNode input = Json.parse(request.path("input").asText("{}"));
            Execution e = start(machine, name, input);
            return AwsJsonEndpoint.Answer.ok(Json.object().put("executionArn", machine.replace(":stateMachine:",
                    ":execution:") + ":" + e.name()).put("startDate", e.startedAt().toEpochMilli() / 1000.0));
        } catch (IllegalArgumentException e) {
            boolean duplicate = runners.containsKey(machine);
            return AwsJsonEndpoint.Answer.error(duplicate ? "ExecutionAlreadyExists" : "StateMachineDoesNotExist",
                    e.getMessage());
        }
    }

    @Override
    public void close() {
        ticker.shutdownNow();
        server.stop(0);
    }
}
