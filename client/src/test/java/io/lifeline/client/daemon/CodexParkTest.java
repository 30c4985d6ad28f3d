package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Codex agent under the daemon, with a stand-in command and Codex's hooks posted to its channel as Codex CLI 0.171.0
 * posts them (each naming the session's rollout file, {@code transcript_path}): a process that exits before its
 * {@code SessionEnd} was handled, its rollout file's last turn ended at {@code usage_limit_exceeded}, is parked
 * until the end of the minute the message names, and its exit is no crash; a session whose last turn finished
 * leaves at its {@code SessionEnd} as before. The resume at the reset is the same path as Claude's
 * ({@link HookParkTest}; with a real Codex, {@code RealRuntimeCodexParkTest}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class CodexParkTest {
    private static final String SESSION = "01a22346-0b86-7fa3-a6a0-fa71deacec44";

    @AutoClose
    private static final LifelineLocal local = LocalHarness.started();
    private static final LifelineClient client = LocalHarness.client(local);

    @TempDir
    Path dir;

    /** A rollout file whose last line ends a turn with {@code error} (a JSON object) or, when null, without one. */
    private Path rollout(String error) throws Exception {
        Path file = Files.createDirectories(dir.resolve("codex/sessions/2026/11/28"))
                .resolve("rollout-2026-11-28T17-48-42-" + SESSION + ".jsonl");
        Files.writeString(file, "{\"type\":\"session_meta\",\"payload\":{\"id\":\"" + SESSION + "\"}}\n"
                + "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"turn_id\":\"t1\","
                + "\"last_agent_message\":" + (error == null ? "\"Done.\"" : "null,\"error\":" + error) + "}}\n",
                StandardCharsets.UTF_8);
        return file;
    }

    private static String codex(String event, Path rollout) {
        return "{\"session_id\":\"" + SESSION + "\",\"transcript_path\":\"" + rollout + "\",\"cwd\":\"/w\","
                + "\"hook_event_name\":\"" + event + "\"}";
    }

    private static void hook(HookedDaemon h, String event, Path rollout) throws Exception {
        assertEquals(200, HookedDaemon.post(h.channel, "codex", h.agent, codex(event, rollout)).statusCode());
    }

    @Test
    void exitedAtAUsageLimitBeforeItsSessionEnd_isParkedUntilTheEndOfTheMinuteNamed_andItsExitIsNoCrash()
            throws Exception {
        String a = "cx-limit";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-cx"));
        ZonedDateTime minute = ZonedDateTime.now(ZoneId.systemDefault()).plusMinutes(10).truncatedTo(ChronoUnit.MINUTES);
        String words = minute.format(DateTimeFormatter.ofPattern("h:mm a", Locale.US));
        Path file = rollout("{\"message\":\"You\u2019ve hit your usage limit. Try again at " + words + ".\","
                + "\"codex_error_info\":\"usage_limit_exceeded\"}");
        try (HookedDaemon h = new HookedDaemon(client, "host-cx", a, Duration.ofMinutes(10), dir).startProcess()) {
            CommandProcesses p = h.processes;
            h.daemon.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));
            hook(h, "SessionStart", file);
            hook(h, "UserPromptSubmit", file);
            h.daemon.runOnce();
            ProcessHandle.of(p.pid(a)).orElseThrow().destroy(); // no SessionEnd: the exit is what the daemon sees
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> !p.isRunning(a)));
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(15), () -> {
                h.daemon.runOnce();
                return client.agent(a).parked() != null;
            }), "parked by the daemon's beat: " + client.allTransitions(a));
            AgentView parked = client.agent(a);
            assertEquals(minute.plusMinutes(1).toInstant(), parked.parked().until(), "the end of the minute named");
            assertEquals("usage limit", parked.parked().reason());
            TickReport r = h.daemon.runOnce();
            assertTrue(r.crashesReported().isEmpty(), "its exit is no crash: " + r);
            assertTrue(client.agent(a).alive());
            assertTrue(client.allTransitions(a).stream().noneMatch(t -> t.to().startsWith("dead")
                    || "offline".equals(t.to())), "never dead nor offline: " + client.allTransitions(a));
        }
    }

    @Test
    void aSessionWhoseLastTurnFinished_leavesAtItsSessionEnd() throws Exception {
        String a = "cx-done";
        client.register(RegisterAgent.of(a, a, "worker").withHost("host-cxd"));
        Path file = rollout(null);
        try (HookedDaemon h = new HookedDaemon(client, "host-cxd", a, Duration.ofMinutes(10), dir).startProcess()) {
            h.daemon.start();
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20), () -> "ready".equals(client.agent(a).status())));
            hook(h, "SessionStart", file);
            hook(h, "SessionEnd", file);
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(15), () -> "offline".equals(client.agent(a)
                    .status())), "it left: " + client.allTransitions(a));
            assertNull(client.agent(a).parked());
        }
    }
}
