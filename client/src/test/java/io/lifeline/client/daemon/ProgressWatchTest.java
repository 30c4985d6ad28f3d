package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.testing.MutableClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's progress judgement ({@link ProgressWatch}) on a real local channel fed Claude Code's hook bodies, a
 * real process and a real Lifeline Local, with the clock moved by the test and the sockets' silence given by it (the
 * sampling itself is {@link StreamSilenceTest}'s and the real runtime's): in a turn, silence past the threshold is a
 * stall; a tool call in flight and a wait are not; a running subagent names the reason; with {@code alert} the
 * process is left running and the flag ends when progress resumes.
 */
@Tag("e2e")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressWatchTest {
    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);
    private static final HttpClient http = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    private static void hook(LocalBeats channel, String agent, String event) throws Exception {
        String body = "{\"session_id\":\"3f1c0d52-7a7e-4c43-9a55-0c6a3b1f0e11\",\"cwd\":\"/w\",\"hook_event_name\":\""
                + event + "\"" + (event.contains("ToolUse") ? ",\"tool_name\":\"Bash\"" : "")
                + (event.startsWith("Subagent") ? ",\"agent_id\":\"sub-1\",\"agent_type\":\"Explore\"" : "") + "}";
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(channel.url() + "/hooks/claude-code"))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json")
                .header(LocalBeats.AGENT_HEADER, agent).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
    }

    @Test
    void inATurn_silencePastTheThreshold_isAStall_butAToolInFlightOrAWaitIsNot_andProgressEndsIt() throws Exception {
        String a = "pw-alert";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-pw"));
        MutableClock clock = new MutableClock(Instant.parse("2026-11-28T10:00:00Z"));
        AtomicLong silence = new AtomicLong();
        List<String> lines = new CopyOnWriteArrayList<>();
        try (LocalBeats channel = LocalBeats.start(List.of(a), clock);
             CommandProcesses p = new CommandProcesses(Map.of(a, "exec sleep 300"), Map.of(), dir);
             HostDaemon d = HostDaemon.builder(client, "host-pw", p).agents(List.of(a)).localBeats(channel)
                     .interval(Duration.ofMinutes(10)).clock(clock).stallAfter(Duration.ofSeconds(20), false)
                     .progressSample(Duration.ofSeconds(3), sessions -> {
                         Map<Long, Long> m = new HashMap<>();
                         sessions.forEach(sid -> m.put(sid, silence.get()));
                         return m;
                     }).onTick(r -> lines.addAll(r.hooks())).build()) {
            p.onExit(d::processExited);
            p.startAll();
            d.joinAll();
            long pid = p.pid(a);

            hook(channel, a, "UserPromptSubmit");
            clock.advance(Duration.ofSeconds(30));
            silence.set(4_000);
            d.progressPass();
            assertEquals(List.of(), stalls(lines), "the stream received 4 s ago: progress");

            hook(channel, a, "PreToolUse");
            clock.advance(Duration.ofSeconds(100));
            silence.set(100_000);
            d.progressPass();
            assertEquals(List.of(), stalls(lines), "a tool call in flight is legitimate silence");

            hook(channel, a, "PostToolUse");
            clock.advance(Duration.ofSeconds(21));
            silence.set(21_000);
            d.progressPass();
            assertEquals(1, stalls(lines).size(), lines.toString());
            assertTrue(stalls(lines).get(0).startsWith(a + ": stalled: model stream silent for 21000 ms"), lines.toString());
            d.progressPass();
            assertEquals(1, stalls(lines).size(), "one stall, told once: " + lines);
            assertEquals(pid, p.pid(a), "alert: the process is left running");
            // The server has it at once, from the pass's own beat: shown stalled, one AgentStalled.
            AgentView shown = client.agent(a);
            assertNotNull(shown.stalled(), "the view shows the daemon's stall");
            assertEquals("model stream silent", shown.stalled().reason());
            assertEquals("working", shown.status(), "alert: alive, flagged");
            assertNotNull(shown.lastProgressAt());
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> events(a, "AgentStalled") == 1));

            silence.set(500);
            d.progressPass();
            assertTrue(lines.contains(a + ": no longer stalled: progress resumed"), lines.toString());
            assertNull(client.agent(a).stalled(), "the end of the stall went to the server at once");
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> events(a, "AgentProgressResumed") == 1));
            assertEquals(1, events(a, "AgentStalled"));

            hook(channel, a, "SubagentStart");
            // The channel tells the daemon of a hook just after its 200: a bounded wait for it.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> d.subagents(a).size() == 1));
            assertEquals(List.of(Instant.parse("2026-11-28T10:02:31Z")), d.subagents(a));
            clock.advance(Duration.ofSeconds(25));
            silence.set(25_000);
            d.progressPass();
            assertEquals(2, stalls(lines).size(), lines.toString());
            assertTrue(stalls(lines).get(1).startsWith(a + ": stalled: subagent silent for 25000 ms")
                    && stalls(lines).get(1).contains("1 subagent(s) running since 2026-11-28T10:02:31Z"), lines.toString());
            assertEquals("subagent silent", client.agent(a).stalled().reason(), "the parent stalls for its subagent");
            AgentView parent = client.agent(a);
            assertEquals(1, parent.subagents().size(), "the server shows the running subagent the batch sent");
            assertEquals("sub-1", parent.subagents().get(0).id());
            assertEquals("Explore", parent.subagents().get(0).type());
            assertEquals(Instant.parse("2026-11-28T10:02:31Z"), parent.subagents().get(0).since());

            hook(channel, a, "SubagentStop");
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(5), () -> d.subagents(a).isEmpty()));
            hook(channel, a, "Stop");
            clock.advance(Duration.ofSeconds(600));
            silence.set(600_000);
            d.progressPass();
            assertTrue(lines.contains(a + ": no longer stalled: its turn ended or it waits"), lines.toString());
            assertEquals(2, stalls(lines).size(), "waiting for the next prompt is no stall: " + lines);
            assertTrue(client.allTransitions(a).stream().noneMatch(t -> t.to().startsWith("dead")),
                    "alert: nothing was reported dead: " + client.allTransitions(a));
            assertNull(client.agent(a).stalled(), "its turn ended: no longer stalled");
            assertNull(client.agent(a).subagents(), "the stop went with the pass's beat: none runs");
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> events(a, "AgentStalled") == 2
                    && events(a, "AgentProgressResumed") == 2), "one event each way per stall");
        }
    }

    private static long events(String agent, String type) {
        return client.events(EventQuery.all().withAgent(agent).withType(type)).events().size();
    }

    private static List<String> stalls(List<String> lines) {
        List<String> out = new ArrayList<>();
        lines.stream().filter(l -> l.contains(": stalled: ")).forEach(out::add);
        return out;
    }
}
