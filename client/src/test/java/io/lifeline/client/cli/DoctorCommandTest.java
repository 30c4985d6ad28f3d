package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code lifeline doctor} against Lifeline Local: every check passes on a working deployment, through the API and
 * through the heartbeat URL, twice in a row (the canary leaves, never judged silent, and is deleted from the list); a
 * wrong key fails it.
 */
@Timeout(120)
@Tag("e2e")
class DoctorCommandTest {
    @AutoClose
    static final LifelineLocal local = LocalHarness.started();

    @TempDir
    Path noConfig;

    record Run(int exit, String out, String err) {
    }

    Run doctor(Map<String, String> env, String... args) {
        Map<String, String> e = new HashMap<>(env);
        e.put("XDG_CONFIG_HOME", noConfig.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(e, d -> { }, Path.of("")));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 1];
        all[0] = "doctor";
        System.arraycopy(args, 0, all, 1, args.length);
        return new Run(cl.execute(all), out.toString(), err.toString());
    }

    Map<String, String> env() {
        return Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", local.adminKey());
    }

    @Test
    void aWorkingLocal_passesEveryCheck_twice_andTheCanaryLeavesAndIsDeleted() {
        for (int i = 0; i < 2; i++) {
            Run r = doctor(env(), "--timeout", "60");
            assertEquals(0, r.exit(), r.out() + r.err());
            for (String check : List.of("api", "canary", "heartbeat", "listed", "event", "metrics", "leave")) {
                assertTrue(r.out().contains("ok   " + check + ": "), check + ": " + r.out());
            }
            assertTrue(r.out().contains("namespace Lifeline has EventsPublished"), r.out());
            assertTrue(r.out().contains("doctor: every check passed"), r.out());
        }
        // The canary left and was deleted: the team's list keeps none, however often the doctor runs.
        LifelineClient c = LocalHarness.client(local);
        assertTrue(c.agents().agents().stream().noneMatch(a -> a.agentId().equals("lifeline-doctor")));
        LifelineApiException gone = assertThrows(LifelineApiException.class, () -> c.agent("lifeline-doctor"));
        assertEquals("AGENT_NOT_FOUND", gone.code());
    }

    @Test
    void anAgentTheDoctorDidNotRegister_isLeftOffline_notDeleted() {
        LifelineClient c = LocalHarness.client(local);
        c.register(RegisterAgent.of("doctor-borrowed", "a worker", "worker"));
        Run r = doctor(env(), "--canary", "doctor-borrowed", "--timeout", "60");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("(kept: its role is not canary)"), r.out());
        assertEquals("offline", c.agent("doctor-borrowed").status());
    }

    @Test
    void throughTheHeartbeatUrl_theBeatTakesTheUrl() {
        Map<String, String> e = new HashMap<>(env());
        e.put("LIFELINE_HEARTBEAT_URL", local.heartbeatUrl().toString());
        Run r = doctor(e, "--canary", "doctor-url", "--timeout", "60");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("ok   heartbeat: accepted through " + local.heartbeatUrl()), r.out());
    }

    @Test
    void aWrongKey_fails() {
        Run r = doctor(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", "ll_" + "x".repeat(43)),
                "--canary", "doctor-wrong", "--timeout", "2");
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out());
        assertTrue(r.out().contains("FAIL api: "), r.out());
    }
}
