package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.hooks.HookEvent;
import io.lifeline.hooks.HookMapping;
import io.lifeline.hooks.HookReader;
import io.lifeline.hooks.HookRuntime;
import io.lifeline.hooks.HookSignal;
import io.lifeline.local.app.LifelineLocal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Hooks that cannot report say so at once, against Lifeline Local: {@code lifeline hooks install} for an agent that is
 * not registered (registered with an admin key; refused, nothing written, with an agent key), with the key variable
 * unset, or with a key Lifeline refuses; {@code lifeline doctor --agent} posting a test hook through the hooks' own
 * path; and the warning for an admin key given with {@code --key}.
 */
@Timeout(120)
@Tag("e2e")
class HooksCheckTest {
    @AutoClose
    static final LifelineLocal local = LocalHarness.started();
    static final LifelineClient admin = LocalHarness.client(local);
    static final String agentKey = admin.createKey("agent", "hooks check").key();

    @TempDir
    Path dir;

    record Run(int exit, String out, String err) {
    }

    private Map<String, String> env(String key) {
        Map<String, String> e = new HashMap<>();
        e.put("HOME", dir.resolve("home").toString());
        e.put("XDG_CONFIG_HOME", dir.resolve("no-config").toString());
        e.put("LIFELINE_URL", local.url().toString());
        if (key != null) {
            e.put("LIFELINE_API_KEY", key);
        }
        return e;
    }

    private Run cli(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }, dir.resolve("project")));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    private Path settings() {
        return dir.resolve("project/.claude/settings.local.json");
    }

    @Test
    void anUnregisteredAgent_withAnAgentKey_isRefused_withNothingWritten_andSaysHowToRegisterIt() {
        Run r = cli(env(agentKey), "hooks", "install", "claude-code", "--agent", "hc-unregistered");
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
        assertTrue(r.err().contains("agent hc-unregistered is not registered in team local, and this key may not "
                + "register it: every hook would be refused (404)"), r.err());
        assertTrue(r.err().contains("lifeline register hc-unregistered"), r.err());
        assertTrue(r.err().contains("nothing was written"), r.err());
        assertFalse(Files.exists(settings()), "nothing written");
        assertEquals(404, status(() -> admin.agent("hc-unregistered")));
    }

    @Test
    void viaTheDaemon_anUnregisteredAgent_isANote_theDaemonRegistersItsAgents() {
        Run r = cli(env(agentKey), "hooks", "install", "claude-code", "--agent", "hc-daemon", "--via-daemon");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("note: agent hc-daemon is not registered in team local, and this key may not "
                + "register it: lifeline daemon registers it at start if its key is an admin key"), r.out());
        assertTrue(Files.exists(settings()));
    }

    @Test
    void anUnregisteredAgent_withAnAdminKey_isRegistered_andTheHooksAreWritten() {
        Run r = cli(env(local.adminKey()), "hooks", "install", "claude-code", "--agent", "hc-new");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("registered: agent hc-new in team local (it was not registered; this key is an "
                + "admin key)"), r.out());
        assertTrue(r.out().contains("ok: Lifeline accepts the hooks' key for agent hc-new"), r.out());
        assertTrue(Files.exists(settings()));
        assertEquals("offline", admin.agent("hc-new").status());
    }

    @Test
    void theKeyVariableUnset_isRefused_namingIt_evenWithAKeyInTheConfigFile() throws Exception {
        admin.register(RegisterAgent.of("hc-nokey", "hc-nokey", "worker"));
        Path config = Files.createDirectories(dir.resolve("no-config/lifeline")).resolve("config");
        Files.writeString(config, "api_key = " + local.adminKey() + "\n", StandardCharsets.UTF_8);
        Run r = cli(env(null), "hooks", "install", "codex", "--agent", "hc-nokey");
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("ok: agent hc-nokey is registered in team local (offline)"), r.out());
        assertTrue(r.err().contains("$LIFELINE_API_KEY is not set: the hooks read the agent's key from it in codex's "
                + "environment, so every hook would be refused (401)"), r.err());
        assertFalse(Files.exists(dir.resolve("project/.codex/hooks.json")), "nothing written");
    }

    @Test
    void theOlderVariable_servesTheCurlHooks_butClaudeCodesHttpHooksNeedTheNewName() {
        admin.register(RegisterAgent.of("hc-old", "hc-old", "worker"));
        Map<String, String> e = env(null);
        e.put("LIFELINE_KEY", agentKey);
        Run gemini = cli(e, "hooks", "install", "gemini", "--agent", "hc-old");
        assertEquals(0, gemini.exit(), gemini.out() + gemini.err());
        assertTrue(gemini.out().contains("ok: $LIFELINE_KEY is set"), gemini.out());
        Run claude = cli(e, "hooks", "install", "claude-code", "--agent", "hc-old");
        assertEquals(LifelineCli.REFUSED, claude.exit(), claude.out() + claude.err());
        assertTrue(claude.err().contains("export LIFELINE_API_KEY=\"$LIFELINE_KEY\""), claude.err());
    }

    @Test
    void aKeyLifelineRefuses_isRefused_andNoCheckInstallsAnyway() {
        admin.register(RegisterAgent.of("hc-badkey", "hc-badkey", "worker"));
        Map<String, String> e = env("ll_" + "x".repeat(43));
        e.put("LIFELINE_API_KEY", "ll_" + "x".repeat(43));
        Run r = cli(e, "hooks", "install", "claude-code", "--agent", "hc-badkey", "--key", local.adminKey());
        assertEquals(LifelineCli.REFUSED, r.exit(), r.out() + r.err());
        assertTrue(r.err().contains("Lifeline refuses the key in $LIFELINE_API_KEY for agent hc-badkey"), r.err());
        Run anyway = cli(e, "hooks", "install", "claude-code", "--agent", "hc-badkey", "--no-check");
        assertEquals(0, anyway.exit(), anyway.out() + anyway.err());
        assertTrue(Files.exists(settings()));
    }

    @Test
    void doctorAgent_sendsATestHookThroughTheHooksPath_andSaysWhatIsWrong() {
        admin.register(RegisterAgent.of("hc-doc", "hc-doc", "worker"));
        Map<String, String> e = env(agentKey);
        e.put("LIFELINE_HEARTBEAT_URL", local.heartbeatUrl().toString());
        Run ok = cli(e, "doctor", "--agent", "hc-doc", "--runtime", "codex");
        assertEquals(0, ok.exit(), ok.out() + ok.err());
        assertTrue(ok.out().contains("ok   hook: POST " + local.heartbeatUrl() + "/v1/teams/local/agents/hc-doc/hooks/"
                + "codex answered 200 {}"), ok.out());
        assertTrue(ok.out().contains("ok   agent: hc-doc is registered in team local (offline)"), ok.out());
        assertEquals("offline", admin.agent("hc-doc").status(), "the test hook writes nothing");

        Run missing = cli(e, "doctor", "--agent", "hc-doc-missing");
        assertEquals(LifelineCli.REFUSED, missing.exit(), missing.out());
        assertTrue(missing.out().contains("FAIL agent: hc-doc-missing is not registered in team local"), missing.out());

        Run noKey = cli(env(null), "doctor", "--agent", "hc-doc");
        assertEquals(LifelineCli.REFUSED, noKey.exit(), noKey.out());
        assertTrue(noKey.out().contains("FAIL key: $LIFELINE_API_KEY is not set here"), noKey.out());
        assertTrue(noKey.out().contains("FAIL hook: POST " + local.url() + "/v1/teams/local/agents/hc-doc/hooks/"
                + "claude-code answered 401"), noKey.out());
    }

    @Test
    void theTestEvent_isNoRuntimesEvent_soLifelineIgnoresIt() {
        for (HookRuntime r : HookRuntime.values()) {
            HookEvent e = HookReader.read(r, ("{\"hook_event_name\":\"" + HookChecks.TEST_EVENT + "\"}")
                    .getBytes(StandardCharsets.UTF_8));
            assertEquals(HookSignal.IGNORED, HookMapping.signal(e), r.wire());
        }
    }

    @Test
    void anAdminKeyOnTheCommandLine_isWarnedOf_anAgentKeyOrTheEnvironmentIsNot() {
        Run flag = cli(env(null), "agents", "--key", local.adminKey());
        assertEquals(0, flag.exit(), flag.err());
        assertTrue(flag.err().contains("lifeline: warning: --key puts an admin key on the command line"), flag.err());
        Run fromEnv = cli(env(local.adminKey()), "agents");
        assertEquals("", fromEnv.err());
        Run agent = cli(env(null), "agents", "--key", agentKey);
        assertEquals(0, agent.exit(), agent.err());
        assertEquals("", agent.err());
    }

    private static int status(Runnable call) {
        try {
            call.run();
            return 200;
        } catch (LifelineApiException e) {
            return e.status();
        }
    }
}
