package io.lifeline.local.app;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.http.LocalGateway;
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
 * agent crashes and its host brings it back when the revive flow asks; one crashes and stays DEAD (it has
 * no host to ask) until it comes back by itself; one crashes for good and ends dead_failed_revive; one
 * reports a context-limit error; one is paused for maintenance and goes quiet without being marked dead;
 * one is registered and never joins. The agents talk to the same gateway as any client, with the local
 * team's admin key.
 *
 * <p>Each status stays for a few seconds, so a dashboard polling every 2 s shows it: a worker holds a task
 * for {@link #WORK_TICKS} ticks and rests {@link #REST_TICKS}, host a restarts its agent {@link #RESTART_TICKS}
 * ticks after it is asked, and the agent with no host stays dead {@link #DEAD_TICKS} ticks. The crashes (and
 * the context-limit report) come again every {@link #CYCLE_TICKS} ticks, so someone who opens the dashboard
 * later still sees them.
 */
final class Demo implements AutoCloseable {
    static final String TEAM = LifelineLocal.LOCAL_TEAM;
    static final List<String> WORKERS = List.of("demo-worker-1", "demo-worker-2");
    static final String REVIVED = "demo-crash-revived";
    static final String LOST = "demo-crash-lost";
    static final String UNHOSTED = "demo-crash-no-host";
    static final String CONTEXT = "demo-context-limit";
    static final String PAUSED = "demo-maintenance";
    static final String NEVER = "demo-never-joined";
    private static final long TICK_MILLIS = 1_000;
    /** Ticks after which the crashing agents stop heartbeating and the paused one goes quiet. */
    private static final int CRASH_AT_TICK = 4;
    /** Ticks a worker holds a task (WORKING), then rests (READY) before it claims the next. */
    static final int WORK_TICKS = 4;
    static final int REST_TICKS = 3;
    /** Ticks between host a's restart request and the agent joining again (RESTARTING meanwhile). */
    static final int RESTART_TICKS = 5;
    /** Ticks the agent with no host stays DEAD before it comes back by itself. */
    static final int DEAD_TICKS = 8;
    /** The crashes and the context-limit report come again this many ticks later. */
    static final int CYCLE_TICKS = 60;

    private final LocalGateway gateway;
    private final String key;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "demo");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger tick = new AtomicInteger();
    private final Set<String> silent = ConcurrentHashMap.newKeySet();
    /** Agent id -> the tick it joins again (host a's restarts, the unhosted agent's return). */
    private final Map<String, Integer> rejoinAt = new ConcurrentHashMap<>();
    /** Worker -> the tick it finishes its task (while working) or claims the next (while resting). */
    private final Map<String, Integer> nextMove = new ConcurrentHashMap<>();
    private int taskNumber;

    Demo(LocalGateway gateway, String key) {
        this.gateway = gateway;
        this.key = key;
        for (String id : List.of(WORKERS.get(0), WORKERS.get(1), REVIVED, UNHOSTED, LOST, CONTEXT, PAUSED, NEVER)) {
            String host = id.equals(REVIVED) ? ",\"hostId\":\"demo-host-a\"" : id.equals(LOST) ? ",\"hostId\":\"demo-host-b\"" : "";
            call("POST", "/v1/teams/" + TEAM + "/agents", "{\"agentId\":\"" + id + "\",\"name\":\"" + id
                    + "\",\"role\":\"demo\"" + host + "}");
            if (!id.equals(NEVER)) {
                call("POST", "/v1/teams/" + TEAM + "/agents/" + id + "/join", null);
            }
        }
        say("started: 8 simulated agents in team '" + TEAM + "' (open the dashboard to watch them)");
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
        for (String id : List.of(REVIVED, UNHOSTED, LOST, CONTEXT, PAUSED)) {
            if (!silent.contains(id)) {
                beat(id);
            }
        }
        int inCycle = n % CYCLE_TICKS;
        if (inCycle == 2) {
            call("POST", "/v1/teams/" + TEAM + "/agents/" + CONTEXT + "/errors",
                    "{\"message\":\"prompt is too long: the context window is full\"}");
            say(CONTEXT + " reported a context-limit error: its session should be rotated");
        }
        if (n == CRASH_AT_TICK) {
            call("POST", "/v1/teams/" + TEAM + "/agents/" + PAUSED + "/pause",
                    "{\"seconds\":600,\"reason\":\"demo maintenance window\"}");
            silent.addAll(List.of(LOST, PAUSED));
            say(LOST + " crashed for good; " + PAUSED + " is paused for maintenance and goes quiet without being marked"
                    + " dead");
        }
        if (inCycle == CRASH_AT_TICK) {
            silent.addAll(List.of(REVIVED, UNHOSTED));
            say(REVIVED + " and " + UNHOSTED + " crashed (no more heartbeats)");
        }
        // The agent with no host: nobody is asked to restart it; it comes back by itself a few seconds after dying.
        if (silent.contains(UNHOSTED) && !rejoinAt.containsKey(UNHOSTED)
                && "dead".equals(call("GET", "/v1/teams/" + TEAM + "/agents/" + UNHOSTED, null).path("status").asText())) {
            rejoinAt.put(UNHOSTED, n + DEAD_TICKS);
            say(UNHOSTED + " is DEAD and has no host to restart it: it comes back by itself in " + DEAD_TICKS + " s");
        }
        answerRestartRequests("demo-host-a", true, n);
        answerRestartRequests("demo-host-b", false, n);
        rejoinAt.forEach((agent, at) -> {
            if (n >= at) {
                rejoinAt.remove(agent);
                call("POST", "/v1/teams/" + TEAM + "/agents/" + agent + "/join", null);
                silent.remove(agent);
                say(agent + " joined again");
            }
        });
    }

    /**
     * A worker claims a task when ready, holds it {@link #WORK_TICKS} ticks, finishes it and rests
     * {@link #REST_TICKS} ticks, heartbeating all along; the second worker starts a tick after the first.
     */
    private void work(String worker, int n) {
        JsonNode agent = call("GET", "/v1/teams/" + TEAM + "/agents/" + worker, null);
        beat(worker);
        int due = nextMove.getOrDefault(worker, worker.endsWith("1") ? 1 : 2);
        if (n < due) {
            return;
        }
        if ("working".equals(agent.path("status").asText()) && agent.has("currentTaskId")) {
            call("POST", "/v1/teams/" + TEAM + "/tasks/" + agent.get("currentTaskId").asText() + "/complete",
                    "{\"agentId\":\"" + worker + "\",\"result\":\"done\"}");
            nextMove.put(worker, n + REST_TICKS);
        } else {
            String task = "demo-task-" + (++taskNumber);
            call("POST", "/v1/teams/" + TEAM + "/tasks", "{\"taskId\":\"" + task + "\",\"title\":\"Demo task\"}");
            call("POST", "/v1/teams/" + TEAM + "/tasks/" + task + "/claim", "{\"agentId\":\"" + worker + "\"}");
            nextMove.put(worker, n + WORK_TICKS);
        }
    }

    /**
     * The hosts' daemons: host a restarts its agent (it joins again {@link #RESTART_TICKS} ticks later, as a
     * real agent takes a moment to start); host b acknowledges but cannot.
     */
    private void answerRestartRequests(String host, boolean canRestart, int n) {
        JsonNode commands = call("GET", "/v1/teams/" + TEAM + "/hosts/" + host + "/commands", null).path("commands");
        for (JsonNode c : commands) {
            // Acknowledged first; a superseded command (the flow that asked has ended) is left alone.
            if (!call("POST", "/v1/teams/" + TEAM + "/hosts/" + host + "/commands/" + c.get("commandId").asText()
                    + "/ack", null).path("success").asBoolean()) {
                continue;
            }
            String agent = c.get("agentId").asText();
            if (canRestart) {
                if (rejoinAt.putIfAbsent(agent, n + RESTART_TICKS) == null) {
                    say(host + " is restarting " + agent + " (attempt " + c.get("attempt").asInt() + ")");
                }
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
        } catch (JsonProcessingException e) {
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
