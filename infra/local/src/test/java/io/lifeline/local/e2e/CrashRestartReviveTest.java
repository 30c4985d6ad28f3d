package io.lifeline.local.e2e;

import static io.lifeline.local.e2e.CrashRestartTest.agents;
import static io.lifeline.local.e2e.CrashRestartTest.call;
import static io.lifeline.local.e2e.CrashRestartTest.chain;
import static io.lifeline.local.e2e.CrashRestartTest.expectedEvents;
import static io.lifeline.local.e2e.CrashRestartTest.kill;
import static io.lifeline.local.e2e.CrashRestartTest.loggedStatusEvents;
import static io.lifeline.local.e2e.CrashRestartTest.ok;
import static io.lifeline.local.e2e.CrashRestartTest.poll;
import static io.lifeline.local.e2e.CrashRestartTest.statuses;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lifeline Local (a separate process) is killed with SIGKILL while an agent's
 * revive flow is waiting for the agent to rejoin, then restarted on the same data directory. Local's Step
 * Functions stand-in keeps executions in memory, so the execution is gone; on start, Local gives every agent
 * left {@code restarting} its flow again under the same execution name (docs/design/local/decisions.md, "A crash of
 * Lifeline Local interrupts revive flows; a restart resumes them"). Checked here: the resumed flow runs out
 * its attempts and the agent ends {@code dead_failed_revive} with a whole history and every event, and a
 * join still brings it back.
 */
@Tag("e2e")
class CrashRestartReviveTest {
    private final CrashRestartTest processes = new CrashRestartTest();

    @AfterEach
    void killAll() throws Exception {
        processes.killAll();
    }

    @Test
    void sigkillDuringReviveFlow_resumesTheFlowAfterRestart_andAJoinStillRevivesIt() throws Exception {
        processes.dataDir = Files.createTempDirectory("lifeline-crash-revive");
        long t0 = System.nanoTime();
        CrashRestartTest.Local first = processes.launch();
        String rev = "rev-1";
        ok(call(first, "POST", agents(), "{\"agentId\":\"" + rev + "\",\"name\":\"R\",\"role\":\"w\","
                + "\"hostId\":\"h-1\"}"));
        ok(call(first, "POST", agents() + "/" + rev + "/join", null));
        poll(Duration.ofSeconds(25), rev + " restarting", () -> "restarting".equals(statuses(first).get(rev)));
        kill(first); // the execution is waiting for the join (1.5 s at --time-scale 0.05)

        CrashRestartTest.Local second = processes.launch();
        List<String> all = List.of(rev);
        poll(Duration.ofSeconds(20), "every transition's event logged after the restart", () ->
                loggedStatusEvents(second).containsAll(expectedEvents(second, all)));
        // The resumed flow waits out its attempts (1.5 + 3 + 6 s scaled) and gives up: never stuck restarting.
        poll(Duration.ofSeconds(40), rev + " given up after the restart",
                () -> "dead_failed_revive".equals(statuses(second).get(rev)));
        List<JsonNode> c = chain(second, rev);
        assertEquals(List.of("join", "heartbeat_expired", "restart_initiated", "restart_exhausted"),
                c.stream().map(t -> t.get("trigger").asText()).toList(), c.toString());

        // The host brings the agent back: a join from dead_failed_revive is allowed.
        ok(call(second, "POST", agents() + "/" + rev + "/join", null));
        poll(Duration.ofSeconds(20), "the join's event logged", () ->
                loggedStatusEvents(second).containsAll(expectedEvents(second, all)));
        c = chain(second, rev);
        assertEquals("ready", c.get(c.size() - 1).get("to").asText(), c.toString());
        kill(second);
        System.out.printf("CrashRestartReviveTest: 1 SIGKILL mid-revive, 2 starts, %.1f s%n",
                (System.nanoTime() - t0) / 1e9);
    }
}
