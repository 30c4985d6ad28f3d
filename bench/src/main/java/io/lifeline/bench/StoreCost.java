package io.lifeline.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Figure 1: DynamoDB requests and units per API operation, from the functions' own requests (counted by
 * {@link CapacityMeter}) with the engine's ReturnConsumedCapacity (AWS's published rules, docs/engine.md). Each operation is repeated and averaged.
 */
public final class StoreCost {

    /** Per operation (per agent for a batch): requests, read units, write units, GSI write units. */
    public record OpCost(String operation, double requests, double readUnits, double writeUnits, double gsiWriteUnits,
                         Map<String, Integer> requestsByOperation, int unreportedCalls, int samples) {
    }

    private final MeteredStack stack;
    private int next;

    public StoreCost(MeteredStack stack) {
        this.stack = stack;
    }

    private String newId(String prefix) {
        return prefix + "-" + (++next);
    }

    /** Runs every operation {@code samples} times; a batch holds {@code batchSize} agents. */
    public Map<String, OpCost> measure(int samples, int batchSize) {
        Map<String, OpCost> out = new LinkedHashMap<>();
        stack.warmAuthorizer();
        measureAgents(out, samples);
        measureBatches(out, samples, batchSize);
        measureTasks(out, samples);
        return out;
    }

    /** An agent's own operations: register, join, and the three kinds of heartbeat. */
    private void measureAgents(Map<String, OpCost> out, int samples) {
        out.put("register", measure("register", samples, 1, () -> {
            String id = newId("reg");
            stack.expect(201, "POST", "/v1/teams/" + MeteredStack.TEAM + "/agents",
                    "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\",\"hostId\":\"host-1\"}");
        }, null));
        List<String> registered = new ArrayList<>();
        out.put("join", measure("join", samples, 1, () -> stack.expect(200, "POST",
                stack.agentPath(registered.get(registered.size() - 1)) + "/join", null), () -> {
                    String id = newId("join");
                    stack.meter.enabled(false);
                    stack.expect(201, "POST", "/v1/teams/" + MeteredStack.TEAM + "/agents",
                            "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}");
                    stack.meter.enabled(true);
                    registered.add(id);
                }));
        List<String> ready = new ArrayList<>();
        out.put("heartbeat (plain)", measure("heartbeat (plain)", samples, 1, () -> stack.expect(200, "POST",
                stack.agentPath(ready.get(ready.size() - 1)) + "/heartbeat", "{}"), () -> {
                    String id = newId("hb");
                    stack.readyAgent(id);
                    ready.add(id);
                }));
        out.put("heartbeat (stats, no status change)", measure("heartbeat (stats)", samples, 1, () -> stack.expect(200,
                "POST", stack.agentPath(ready.get(ready.size() - 1)) + "/heartbeat",
                "{\"stats\":{\"messagesProcessed\":10,\"toolCallsExecuted\":3,\"errorsEncountered\":0,\"uptime\":600}}"),
                () -> {
                    String id = newId("hbs");
                    stack.readyAgent(id);
                    ready.add(id);
                }));
        out.put("heartbeat (status change ready->working)", measure("heartbeat (status change)", samples, 1,
                () -> stack.expect(200, "POST", stack.agentPath(ready.get(ready.size() - 1)) + "/heartbeat",
                        "{\"status\":\"working\"}"), () -> {
                    String id = newId("hbw");
                    stack.readyAgent(id);
                    ready.add(id);
                }));
    }

    /** A team's batch and a host daemon's batches of 10 and 25, per agent. */
    private void measureBatches(Map<String, OpCost> out, int samples, int batchSize) {
        List<String> batch = new ArrayList<>();
        out.put("batched heartbeat (per agent, batch of " + batchSize + ")", measure("batched heartbeat", samples,
                batchSize, () -> {
                    StringBuilder body = new StringBuilder("{\"heartbeats\":[");
                    for (int i = 0; i < batch.size(); i++) {
                        body.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(batch.get(i)).append("\"}");
                    }
                    stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/heartbeats",
                            body.append("]}").toString());
                }, () -> {
                    batch.clear();
                    for (int i = 0; i < batchSize; i++) {
                        String id = newId("b");
                        stack.readyAgent(id);
                        batch.add(id);
                    }
                }));
        for (int hostSize : new int[] {10, 25}) {
            // A daemon's batch through its host lease: its agents linked by a first batch, then the plain
            // batch measured, once per sample.
            List<String> hosted = new ArrayList<>();
            String host = "host-" + hostSize;
            Supplier<String> body = () -> {
                StringBuilder b = new StringBuilder("{\"hostId\":\"" + host + "\",\"heartbeats\":[");
                for (int i = 0; i < hosted.size(); i++) {
                    b.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(hosted.get(i))
                            .append("\",\"localBeatAgeMs\":1000}");
                }
                return b.append("]}").toString();
            };
            out.put("hosted batch of " + hostSize + " (per agent)", measure("hosted batch of " + hostSize, samples,
                    hostSize, () -> stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/heartbeats",
                            body.get()), () -> {
                        if (hosted.isEmpty()) {
                            for (int i = 0; i < hostSize; i++) {
                                String id = newId("h" + hostSize + "-");
                                stack.readyAgent(id);
                                hosted.add(id);
                            }
                            stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/heartbeats", body.get());
                        }
                    }));
        }
    }

    /** A task's create, claim and complete. */
    private void measureTasks(Map<String, OpCost> out, int samples) {
        List<String> tasks = new ArrayList<>();
        out.put("task create", measure("task create", samples, 1, () -> {
            String t = newId("task");
            tasks.add(t);
            createTask(t);
        }, null));
        List<String> workers = new ArrayList<>();
        List<String> workerTasks = new ArrayList<>();
        out.put("task claim", measure("task claim", samples, 1, () -> newestOnNewestTask(workers, workerTasks, "claim"),
                () -> readyWithTask(workers, workerTasks, "claimer", "ctask", false)));
        out.put("task complete", measure("task complete", samples, 1,
                () -> newestOnNewestTask(workers, workerTasks, "complete"),
                () -> readyWithTask(workers, workerTasks, "completer", "dtask", true)));
    }

    private void createTask(String taskId) {
        stack.expect(201, "POST", "/v1/teams/" + MeteredStack.TEAM + "/tasks",
                "{\"taskId\":\"" + taskId + "\",\"title\":\"t\"}");
    }

    /** The measured request: the newest agent's {@code action} (claim, complete) on the newest task. */
    private void newestOnNewestTask(List<String> agents, List<String> tasks, String action) {
        stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/tasks/" + tasks.get(tasks.size() - 1) + "/"
                + action, "{\"agentId\":\"" + agents.get(agents.size() - 1) + "\"}");
    }

    /** A sample's set-up: a ready agent and a new task (claimed by it when {@code claimed}), the task unmetered. */
    private void readyWithTask(List<String> agents, List<String> tasks, String agentPrefix, String taskPrefix,
                               boolean claimed) {
        String id = newId(agentPrefix);
        stack.readyAgent(id);
        agents.add(id);
        String t = newId(taskPrefix);
        stack.meter.enabled(false);
        createTask(t);
        if (claimed) {
            stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/tasks/" + t + "/claim",
                    "{\"agentId\":\"" + id + "\"}");
        }
        stack.meter.enabled(true);
        tasks.add(t);
    }

    private OpCost measure(String name, int samples, int perSample, Runnable op, Runnable setUp) {
        long t0 = System.nanoTime();
        List<CapacityMeter.Call> all = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            if (setUp != null) {
                stack.meter.enabled(false);
                try {
                    setUp.run();
                } finally {
                    stack.meter.enabled(true);
                }
            }
            stack.meter.reset();
            op.run();
            all.addAll(stack.meter.calls());
            stack.meter.reset();
        }
        CapacityMeter.Totals t = CapacityMeter.totals(all);
        System.out.printf("  %-28s %d samples in %d ms%n", name, samples, (System.nanoTime() - t0) / 1_000_000);
        double n = samples * (double) perSample;
        Map<String, Integer> perOp = new LinkedHashMap<>();
        t.byOperation().forEach((k, v) -> perOp.put(k, v));
        return new OpCost(name, t.requests() / n, t.readUnits() / n, t.writeUnits() / n, t.gsiWriteUnits() / n,
                perOp, t.unreported(), samples);
    }
}
