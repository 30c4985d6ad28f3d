package io.lifeline.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.support.Json;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --demo}: a team of simulated agents on Lifeline Local, so a newcomer sees every status within a
 * minute or two, on the dashboard and in the console. Two workers keep claiming and finishing tasks; one
 * agent crashes and its host brings it back when the revive flow asks; one crashes for good and ends
 * dead_failed_revive; one reports a context-limit error; one is paused for maintenance and goes quiet
 * without being marked dead; one is registered and never joins. The agents talk to the same gateway as
 * any client, with the local team's admin key.
 */
final class Demo implements AutoCloseable {
    static final String TEAM = LifelineLocal.LOCAL_TEAM;
    static final List<String> WORKERS = List.of("demo-worker-1", "demo-worker-2");
    static final String REVIVED = "demo-crash-revived";
    static final String LOST = "demo-crash-lost";
    static final String CONTEXT = "demo-context-limit";
    static final String PAUSED = "demo-maintenance";
    static final String NEVER = "demo-never-joined";
    private static final long TICK_MILLIS = 1_000;
    /** Ticks after which the crashing agents stop heartbeating and the paused one goes quiet. */
    private static final int CRASH_AT_TICK = 4;

    private final LocalGateway gateway;
    private final String key;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "demo");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger tick = new AtomicInteger();
    private final Set<String> silent = ConcurrentHashMap.newKeySet();
    private int taskNumber;

    Demo(LocalGateway gateway, String key) {
        this.gateway = gateway;
        this.key = key;
        for (String id : List.of(WORKERS.get(0), WORKERS.get(1), REVIVED, LOST, CONTEXT, PAUSED, NEVER)) {
            String host = id.equals(REVIVED) ? ",\"hostId\":\"demo-host-a\"" : id.equals(LOST) ? ",\"hostId\":\"demo-host-b\"" : "";
            call("POST", "/v1/teams/" + TEAM + "/agents", "{\"agentId\":\"" + id + "\",\"name\":\"" + id
                    + "\",\"role\":\"demo\"" + host + "}");
            if (!id.equals(NEVER)) {
                call("POST", "/v1/teams/" + TEAM + "/agents/" + id + "/join", null);
            }
        }
        say("started: 7 simulated agents in team '" + TEAM + "' (open the dashboard to watch them)");
        ticker.scheduleWithFixedDelay(this::safeTick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void safeTick() {
        try {
            step(tick.incrementAndGet());
        } catch (RuntimeException e) {
            System.err.println("demo: " + e);
        }
    }

    private void step(int n) {
        for (String worker : WORKERS) {
            work(worker, n);
        }
        for (String id : List.of(REVIVED, LOST, CONTEXT, PAUSED)) {
            if (!silent.contains(id)) {
                beat(id);
            }
        }
        if (n == 2) {
            call("POST", "/v1/teams/" + TEAM + "/agents/" + CONTEXT + "/errors",
                    "{\"message\":\"prompt is too long: the context window is full\"}");
            say(CONTEXT + " reported a context-limit error: its session should be rotated");
        }
        if (n == CRASH_AT_TICK) {
            call("POST", "/v1/teams/" + TEAM + "/agents/" + PAUSED + "/pause",
                    "{\"seconds\":600,\"reason\":\"demo maintenance window\"}");
            silent.addAll(List.of(REVIVED, LOST, PAUSED));
            say(REVIVED + " and " + LOST + " crashed (no more heartbeats); " + PAUSED
                    + " is paused for maintenance and goes quiet without being marked dead");
        }
        answerRestartRequests("demo-host-a", true);
        answerRestartRequests("demo-host-b", false);
    }

    /** A worker claims a task when ready and finishes it on the next tick, heartbeating all along. */
    private void work(String worker, int n) {
        JsonNode agent = call("GET", "/v1/teams/" + TEAM + "/agents/" + worker, null);
        beat(worker);
        if ("working".equals(agent.path("status").asText()) && agent.has("currentTaskId")) {
            call("POST", "/v1/teams/" + TEAM + "/tasks/" + agent.get("currentTaskId").asText() + "/complete",
                    "{\"agentId\":\"" + worker + "\",\"result\":\"done\"}");
        } else if (n % 2 == (worker.endsWith("1") ? 0 : 1)) {
            String task = "demo-task-" + (++taskNumber);
            call("POST", "/v1/teams/" + TEAM + "/tasks", "{\"taskId\":\"" + task + "\",\"title\":\"Demo task\"}");
            call("POST", "/v1/teams/" + TEAM + "/tasks/" + task + "/claim", "{\"agentId\":\"" + worker + "\"}");
        }
    }

    /** The hosts' daemons: host a restarts its agent (it joins again); host b acknowledges but cannot. */
    private void answerRestartRequests(String host, boolean canRestart) {
        JsonNode commands = call("GET", "/v1/teams/" + TEAM + "/hosts/" + host + "/commands", null).path("commands");
        for (JsonNode c : commands) {
            // Acknowledged first; a superseded command (the flow that asked has ended) is left alone.
            if (!call("POST", "/v1/teams/" + TEAM + "/hosts/" + host + "/commands/" + c.get("commandId").asText()
                    + "/ack", null).path("success").asBoolean()) {
                continue;
            }
            String agent = c.get("agentId").asText();
            if (canRestart) {
                call("POST", "/v1/teams/" + TEAM + "/agents/" + agent + "/join", null);
                silent.remove(agent);
                say(host + " restarted " + agent + " (attempt " + c.get("attempt").asInt() + "): it joined again");
            } else {
                say(host + " could not restart " + agent + " (attempt " + c.get("attempt").asInt() + ")");
            }
        }
    }

    private void beat(String id) {
        call("POST", "/v1/teams/" + TEAM + "/agents/" + id + "/heartbeat", "{}");
    }

    private JsonNode call(String method, String path, String body) {
        LocalGateway.Response r = gateway.handle(method, path, null,
                Map.of("Authorization", List.of("Bearer " + key)), body);
        try {
            return Json.parse(r.body());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return Json.object();
        }
    }

    private static void say(String line) {
        System.out.println("[demo] " + line);
    }

    @Override
    public void close() {
        ticker.shutdownNow();
    }
}
