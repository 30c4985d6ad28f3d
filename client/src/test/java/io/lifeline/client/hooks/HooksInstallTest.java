package io.lifeline.client.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.cli.LifelineCli;
import io.lifeline.hooks.HookMapping;
import io.lifeline.hooks.HookRuntime;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code lifeline hooks install|uninstall}, in-process against temporary settings files: the merge keeps the user's
 * keys and hooks, a second install changes nothing, uninstall takes out only Lifeline's entries, --dry-run writes
 * nothing, a file that cannot be edited safely is refused with nothing written, and the API key is in no file. The
 * forwarders themselves run (sh and curl) against a recorder. The runtimes reading these files are
 * {@link RealRuntimeHooksTest}'s.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("e2e")
class HooksInstallTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "sk-lifeline-never-in-a-file-7731";

    @TempDir
    Path tmp;

    private record Run(int exit, String out, String err) {
    }

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("HOME", tmp.resolve("home").toString());
        env.put("XDG_CONFIG_HOME", tmp.resolve("home/.config").toString());
        env.put("LIFELINE_URL", "http://127.0.0.1:8787");
        env.put("LIFELINE_API_KEY", KEY);
        return env;
    }

    private Run cli(String... args) {
        return cli(env(), args);
    }

    private Run cli(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(env, d -> { }, tmp.resolve("project")));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    private static JsonNode json(Path file) throws Exception {
        return JSON.readTree(Files.readString(file));
    }

    private static List<String> names(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** Every file under {@code dir}, none holding the key. */
    private static void assertNoKeyUnder(Path dir) throws Exception {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                assertFalse(Files.readString(f, StandardCharsets.ISO_8859_1).contains(KEY), f + " holds the API key");
            }
        }
    }

    @Test
    void claudeCode_intoAProjectWithTheUsersHooks_mergesOnce_keepsTheirs_andUninstallLeavesOnlyTheirs() throws Exception {
        Path settings = tmp.resolve("project/.claude/settings.local.json");
        Files.createDirectories(settings.getParent());
        String users = """
                {
                  "permissions": {"allow": ["Bash(ls:*)"]},
                  "hooks": {
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}]
                  },
                  "model": "opus"
                }
                """;
        Files.writeString(settings, users);

        Run first = cli("hooks", "install", "claude-code", "--agent", "cc-1", "--team", "t1", "--key", KEY);
        assertEquals(0, first.exit(), first.err());
        assertTrue(first.out().contains("added Lifeline's hook for SessionStart"), first.out());
        assertTrue(first.out().contains("kept 1 other hook"), first.out());
        JsonNode after = json(settings);
        assertEquals(List.of("permissions", "hooks", "model"), names(after));
        assertEquals("opus", after.path("model").asText());
        assertEquals(HookFiles.CLAUDE_EVENTS.stream().sorted().toList(), names(after.path("hooks")).stream().sorted()
                .toList());
        JsonNode pre = after.path("hooks").path("PreToolUse");
        assertEquals("./audit.sh", pre.get(0).path("hooks").get(0).path("command").asText(), "theirs first, untouched");
        JsonNode http = pre.get(1).path("hooks").get(0);
        assertEquals("http", http.path("type").asText());
        assertEquals("http://127.0.0.1:8787/v1/teams/t1/agents/cc-1/hooks/claude-code", http.path("url").asText());
        assertEquals("Bearer $LIFELINE_API_KEY", http.path("headers").path("Authorization").asText());
        assertEquals("cc-1", http.path("headers").path("X-Lifeline-Agent").asText());
        assertEquals("[\"LIFELINE_API_KEY\"]", http.path("allowedEnvVars").toString());
        JsonNode start = after.path("hooks").path("SessionStart").get(0).path("hooks").get(0);
        assertEquals("command", start.path("type").asText(), "HTTP hooks are not run for SessionStart");
        assertTrue(start.path("command").asText().contains("'http://127.0.0.1:8787/v1/teams/t1/agents/cc-1/hooks/"
                + "claude-code' || true"), start.toString());
        assertNoKeyUnder(tmp);

        String once = Files.readString(settings);
        Run second = cli("hooks", "install", "claude-code", "--agent", "cc-1", "--team", "t1");
        assertEquals(0, second.exit(), second.err());
        assertTrue(second.out().contains("already installed: SessionStart"), second.out());
        assertTrue(second.out().contains("(unchanged)"), second.out());
        assertEquals(once, Files.readString(settings), "twice is once");

        Run removed = cli("hooks", "uninstall", "claude-code");
        assertEquals(0, removed.exit(), removed.err());
        assertEquals(JSON.readTree(users), json(settings), "only Lifeline's entries went");
    }

    @Test
    void claudeCode_viaTheDaemon_usesCommandHooksPostingToLifelineDaemon_withoutAKey() throws Exception {
        Run r = cli("hooks", "install", "claude-code", "--agent", "cc-2", "--via-daemon", "--user");
        assertEquals(0, r.exit(), r.err());
        JsonNode hooks = json(tmp.resolve("home/.claude/settings.json")).path("hooks");
        for (String event : HookFiles.CLAUDE_EVENTS) {
            JsonNode h = hooks.path(event).get(0).path("hooks").get(0);
            assertEquals("command", h.path("type").asText(), event + ": the URL of an HTTP hook cannot hold a variable");
            String command = h.path("command").asText();
            assertTrue(command.contains("\"$LIFELINE_DAEMON/hooks/claude-code\""), command);
            assertTrue(command.contains("X-Lifeline-Agent: cc-2"), command);
            assertFalse(command.contains("Authorization"), "the daemon holds the key: " + command);
        }
    }

    @Test
    void codex_mergesHooksJsonAndNotify_leavesTheUsersTomlAsItWas_andANotifyOfTheirsAlone() throws Exception {
        Path codexHome = tmp.resolve("codex-home");
        Files.createDirectories(codexHome);
        String toml = "# mine\nmodel = \"o5\"\n\n[model_providers.x]\nname = \"x\"\nnotify = \"not top level\"\n";
        Files.writeString(codexHome.resolve("config.toml"), toml);
        Map<String, String> env = env();
        env.put("CODEX_HOME", codexHome.toString());

        Run r = cli(env, "hooks", "install", "codex", "--agent", "cx-1", "--user");
        assertEquals(0, r.exit(), r.err());
        JsonNode hooks = json(codexHome.resolve("hooks.json")).path("hooks");
        assertEquals(HookFiles.CODEX_EVENTS, names(hooks));
        for (String event : HookFiles.CODEX_EVENTS) {
            JsonNode h = hooks.path(event).get(0).path("hooks").get(0);
            assertEquals(List.of("type", "command", "timeout"), names(h), "only the keys Codex knows: " + h);
            assertEquals(3, h.path("timeout").asInt(), "Codex caps SessionEnd's at 3 s");
        }
        List<String> lines = Files.readAllLines(codexHome.resolve("config.toml"));
        assertTrue(lines.get(0).startsWith("notify = [\"sh\", \"-c\", \"printf '%s' \\\"$1\\\" | curl "), lines.get(0));
        assertTrue(lines.get(0).endsWith(", \"lifeline-notify\"]"), lines.get(0));
        assertEquals(toml, String.join("\n", lines.subList(1, lines.size())) + "\n", "the rest as it was");
        assertNoKeyUnder(tmp);

        Run again = cli(env, "hooks", "install", "codex", "--agent", "cx-1", "--user");
        assertEquals(2, again.out().split("\\(unchanged\\)", -1).length - 1, again.out());

        assertEquals(0, cli(env, "hooks", "uninstall", "codex", "--user").exit());
        assertEquals(toml, Files.readString(codexHome.resolve("config.toml")));
        assertFalse(Files.exists(codexHome.resolve("hooks.json")), "a hooks.json holding only Lifeline's goes");

        String theirs = "notify = [\"notify-send\", \"codex\"]\n";
        Files.writeString(codexHome.resolve("config.toml"), theirs);
        Run kept = cli(env, "hooks", "install", "codex", "--agent", "cx-1", "--user");
        assertEquals(0, kept.exit(), kept.err());
        assertTrue(kept.out().contains("left the notify program already set here alone"), kept.out());
        assertEquals(theirs, Files.readString(codexHome.resolve("config.toml")));
    }

    @Test
    void codex_inAProject_writesHooksJsonOnly_codexRunsNotifyFromTheUsersConfigAlone() throws Exception {
        Run r = cli("hooks", "install", "codex", "--agent", "cx-2");
        assertEquals(0, r.exit(), r.err());
        assertTrue(Files.exists(tmp.resolve("project/.codex/hooks.json")));
        assertFalse(Files.exists(tmp.resolve("project/.codex/config.toml")));
        assertTrue(r.out().contains("install --user for turn ends that need no trust"), r.out());
    }

    @Test
    void gemini_installsCommandHooksNamedLifeline_butNeverTheModelEvents() throws Exception {
        Run r = cli("hooks", "install", "gemini", "--agent", "gm-1", "--project-dir", tmp.resolve("p2").toString());
        assertEquals(0, r.exit(), r.err());
        JsonNode hooks = json(tmp.resolve("p2/.gemini/settings.json")).path("hooks");
        assertEquals(HookFiles.GEMINI_EVENTS, names(hooks));
        for (String heavy : List.of("BeforeModel", "AfterModel", "BeforeToolSelection")) {
            assertFalse(hooks.has(heavy), heavy);
        }
        JsonNode h = hooks.path("AfterAgent").get(0).path("hooks").get(0);
        assertEquals("lifeline", h.path("name").asText());
        assertEquals(3000, h.path("timeout").asInt(), "Gemini's timeouts are milliseconds");
        assertTrue(h.path("command").asText().contains("-o /dev/null"), "no stdout: Gemini reads it as JSON");
    }

    @Test
    void everyInstalledEvent_isOneLifelinesMappingNames() {
        Map<HookRuntime, List<String>> installed = Map.of(HookRuntime.CLAUDE_CODE, HookFiles.CLAUDE_EVENTS,
                HookRuntime.CODEX, HookFiles.CODEX_EVENTS, HookRuntime.GEMINI, HookFiles.GEMINI_EVENTS,
                HookRuntime.OPENCODE, OpencodePlugin.EVENTS.stream().filter(e -> !e.equals("server.instance.disposed"))
                        .toList());
        installed.forEach((runtime, events) -> {
            for (String e : events) {
                assertTrue(HookMapping.events(runtime).contains(e), runtime + " " + e);
            }
        });
    }

    @Test
    void opencode_writesItsPluginFile_refusesAForeignOne_andUninstallDeletesIt() throws Exception {
        Path plugin = tmp.resolve("home/.config/opencode/plugins/lifeline.js");
        Run r = cli("hooks", "install", "opencode", "--agent", "oc-1", "--user");
        assertEquals(0, r.exit(), r.err());
        String js = Files.readString(plugin);
        assertTrue(js.contains("const AGENT = \"oc-1\";"), js);
        assertTrue(js.contains("\"http://127.0.0.1:8787/v1/teams/local/agents/oc-1/hooks/opencode\""), js);
        assertTrue(js.contains("process.env.LIFELINE_API_KEY"), js);
        assertNoKeyUnder(tmp);
        assertTrue(cli("hooks", "install", "opencode", "--agent", "oc-1", "--user").out().contains("(unchanged)"));
        assertEquals(0, cli("hooks", "uninstall", "opencode", "--user").exit());
        assertFalse(Files.exists(plugin));

        Files.createDirectories(plugin.getParent());
        Files.writeString(plugin, "export const Mine = async () => ({});\n");
        Run refused = cli("hooks", "install", "opencode", "--agent", "oc-1", "--user");
        assertEquals(LifelineCli.USAGE, refused.exit());
        assertTrue(refused.err().contains("was not written by lifeline hooks install"), refused.err());
        assertEquals(LifelineCli.USAGE, cli("hooks", "uninstall", "opencode", "--user").exit());
        assertEquals("export const Mine = async () => ({});\n", Files.readString(plugin));
    }

    @Test
    void dryRun_printsWhatWouldBeWritten_andWritesNothing() throws Exception {
        Run r = cli("hooks", "install", "gemini", "--agent", "gm-2", "--dry-run");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("would write (dry run: nothing written)"), r.out());
        assertTrue(r.out().contains("\"AfterAgent\""), r.out());
        assertFalse(Files.exists(tmp.resolve("project/.gemini")));
    }

    @Test
    void aSettingsFileThatIsNotJson_orHooksOfTheWrongShape_isRefused_writingNothing() throws Exception {
        Path settings = tmp.resolve("project/.claude/settings.local.json");
        Files.createDirectories(settings.getParent());
        for (String bad : List.of("{\"hooks\": {", "{\"hooks\": []}", "[1, 2]", "{\"hooks\": {\"Stop\": {}}}")) {
            Files.writeString(settings, bad);
            Run r = cli("hooks", "install", "claude-code", "--agent", "cc-3");
            assertEquals(LifelineCli.USAGE, r.exit(), bad);
            assertTrue(r.err().contains(settings.toString()) && r.err().contains("nothing was written"), r.err());
            assertEquals(bad, Files.readString(settings));
        }
    }

    @Test
    void badUsage_unknownRuntime_badAgentId_bothScopes_bothModes_missingAgent() {
        for (String[] args : List.of(new String[] {"hooks", "install", "cursor", "--agent", "a"},
                new String[] {"hooks", "install", "codex", "--agent", "a b"},
                new String[] {"hooks", "install", "codex", "--agent", "a", "--user", "--project-dir", "x"},
                new String[] {"hooks", "install", "codex", "--agent", "a", "--direct", "--via-daemon"},
                new String[] {"hooks", "install", "codex"},
                new String[] {"hooks", "install", "codex", "--agent", "a", "--url", "http://h/x'y"},
                new String[] {"hooks"})) {
            Run r = cli(args);
            assertEquals(LifelineCli.USAGE, r.exit(), String.join(" ", args) + ": " + r.out() + r.err());
        }
        assertFalse(Files.exists(tmp.resolve("project")));
    }

    @Test
    void theForwarder_postsTheHookBodyWithTheKeyFromTheEnvironment_exitsZeroSilently_evenWhenNothingListens()
            throws Exception {
        String body = "{\"hook_event_name\":\"Stop\",\"session_id\":\"s1\"}";
        try (HookRecorder recorder = HookRecorder.start()) {
            HookTarget direct = HookTarget.direct(HookRuntime.CODEX, "cx-9", "t9", recorder.url());
            ShellRun sent = sh(direct.curlFromStdin(), body, Map.of("LIFELINE_API_KEY", KEY));
            assertEquals(0, sent.exit());
            assertEquals("", sent.stdout());
            List<HookRecorder.Post> posts = recorder.posts();
            assertEquals(1, posts.size());
            assertEquals("/v1/teams/t9/agents/cx-9/hooks/codex", posts.get(0).path());
            assertEquals("Bearer " + KEY, posts.get(0).headers().get("Authorization"));
            assertEquals("cx-9", posts.get(0).headers().get("X-Lifeline-Agent"));
            assertEquals(body, posts.get(0).body());

            HookTarget daemon = HookTarget.viaDaemon(HookRuntime.CODEX, "cx-9", "t9");
            ShellRun notified = sh(daemon.curlFromFirstArgument() + "", null,
                    Map.of("LIFELINE_DAEMON", recorder.url().toString()), "lifeline-notify",
                    "{\"type\":\"agent-turn-complete\"}");
            assertEquals(0, notified.exit());
            assertEquals("/hooks/codex", recorder.posts().get(1).path());
            assertEquals("{\"type\":\"agent-turn-complete\"}", recorder.posts().get(1).body());
        }
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        HookTarget nowhere = HookTarget.direct(HookRuntime.GEMINI, "gm-9", "t9",
                URI.create("http://127.0.0.1:" + closed));
        ShellRun away = sh(nowhere.curlFromStdin(), body, Map.of());
        assertEquals(0, away.exit(), "Lifeline away: the runtime still sees success");
        assertEquals("", away.stdout());
        ShellRun noDaemon = sh(HookTarget.viaDaemon(HookRuntime.GEMINI, "gm-9", "t9").curlFromStdin(), body, Map.of());
        assertEquals(0, noDaemon.exit(), "no daemon set: still success");
        assertEquals("", noDaemon.stdout());
    }

    /**
     * Gemini CLI reads comments in its settings.json: such a file is edited in place, every comment and the user's own
     * hook kept, a second install changes nothing, uninstall takes out only Lifeline's entries and keeps the comments;
     * a comment inside a list Lifeline would rewrite is refused with nothing written.
     */
    @Test
    void gemini_settingsWithComments_keepTheirComments_throughInstallAndUninstall() throws Exception {
        Path settings = tmp.resolve("project/.gemini/settings.json");
        Files.createDirectories(settings.getParent());
        String users = """
                {
                  // Gemini settings, kept by hand
                  "security": {"auth": {"selectedType": "gemini-api-key"}}, /* the key is in the env */
                  "hooks": {
                    // my own formatter, after every tool
                    "AfterTool": [{"hooks": [{"type": "command", "command": "./fmt.sh"}]}]
                  },
                  "model": {"name": "gemini-3.1-pro-preview"} // pinned
                }
                """;
        Files.writeString(settings, users);
        Run first = cli("hooks", "install", "gemini", "--agent", "gm-c", "--team", "t1", "--no-check");
        assertEquals(0, first.exit(), first.err());
        assertTrue(first.out().contains("kept the file's comments"), first.out());
        String after = Files.readString(settings);
        for (String comment : List.of("// Gemini settings, kept by hand", "/* the key is in the env */",
                "// my own formatter, after every tool", "// pinned")) {
            assertTrue(after.contains(comment), comment + " kept:\n" + after);
        }
        JsonNode tree = JSON.readTree(JsoncSplice.COMMENTED.createParser(after));
        assertEquals(List.of("security", "hooks", "model"), names(tree));
        assertEquals(HookFiles.GEMINI_EVENTS.stream().sorted().toList(), names(tree.path("hooks")).stream().sorted()
                .toList());
        JsonNode afterTool = tree.path("hooks").path("AfterTool");
        assertEquals("./fmt.sh", afterTool.get(0).path("hooks").get(0).path("command").asText(), "theirs first");
        assertEquals("lifeline", afterTool.get(1).path("hooks").get(0).path("name").asText());

        Run second = cli("hooks", "install", "gemini", "--agent", "gm-c", "--team", "t1", "--no-check");
        assertEquals(0, second.exit(), second.err());
        assertEquals(after, Files.readString(settings), "a second install changes nothing");

        Run out = cli("hooks", "uninstall", "gemini");
        assertEquals(0, out.exit(), out.err());
        String left = Files.readString(settings);
        JsonNode leftTree = JSON.readTree(JsoncSplice.COMMENTED.createParser(left));
        assertEquals(JSON.readTree(JsoncSplice.COMMENTED.createParser(users)), leftTree, left);
        for (String comment : List.of("// Gemini settings, kept by hand", "/* the key is in the env */",
                "// my own formatter, after every tool", "// pinned")) {
            assertTrue(left.contains(comment), comment + " kept:\n" + left);
        }

        String inside = """
                {"hooks": {"BeforeTool": [
                  // lint first
                  {"hooks": [{"type": "command", "command": "./lint.sh"}]}
                ]}}
                """;
        Files.writeString(settings, inside);
        Run refused = cli("hooks", "install", "gemini", "--agent", "gm-c", "--team", "t1", "--no-check");
        assertEquals(LifelineCli.USAGE, refused.exit(), refused.out());
        assertTrue(refused.err().contains("hooks.BeforeTool has comments inside, which Lifeline's change would lose"),
                refused.err());
        assertEquals(inside, Files.readString(settings), "nothing written");

        String noHooks = "{\n  // only a comment, and no hooks yet\n  \"general\": {\"vimMode\": true}\n}\n";
        Files.writeString(settings, noHooks);
        assertEquals(0, cli("hooks", "install", "gemini", "--agent", "gm-c", "--team", "t1", "--no-check").exit());
        assertEquals(HookFiles.GEMINI_EVENTS.size(), JSON.readTree(JsoncSplice.COMMENTED.createParser(
                Files.readString(settings))).path("hooks").size());
        assertEquals(0, cli("hooks", "uninstall", "gemini").exit());
        assertEquals(noHooks, Files.readString(settings), "the hooks member added and taken out again, to the byte");
    }

    /** The watchers' locks in {@code dir}: one per watcher still running. */
    private static long watchers(Path dir) throws IOException {
        try (Stream<Path> locks = Files.list(dir)) {
            return locks.count();
        }
    }

    /**
     * The session-start forwarder leaves a watcher of its parent (a stand-in runtime: a shell that runs the hook,
     * twice, as a {@code /clear} would, then waits): the hook itself returns at once, with no output; one watcher
     * only; once the stand-in is killed with SIGKILL, exactly one {@code LifelineRuntimeExited} is posted, with the
     * key (the older variable name here) and the agent's header, and the watcher is gone.
     */
    @Test
    void theSessionStartForwarder_leavesOneWatcher_thatPostsOnceWhenTheRuntimeIsKilled() throws Exception {
        try (HookRecorder recorder = HookRecorder.start()) {
            HookTarget direct = HookTarget.direct(HookRuntime.CLAUDE_CODE, "cc-w", "t9", recorder.url());
            String hook = direct.sessionStartFromStdin();
            ProcessBuilder pb = new ProcessBuilder("sh", "-c", "for i in 1 2; do echo '{\"hook_event_name\":"
                    + "\"SessionStart\"}' | sh -c \"$HOOK\" > \"$OUT\"; done; echo started; exec sleep 60");
            pb.environment().remove("LIFELINE_API_KEY");
            pb.environment().put("LIFELINE_KEY", KEY);
            pb.environment().put("HOOK", hook);
            pb.environment().put("TMPDIR", Files.createDirectories(tmp.resolve("watch-tmp")).toString());
            Path out = tmp.resolve("hook.out");
            pb.environment().put("OUT", out.toString());
            Process runtime = pb.start();
            try {
                assertEquals("started", new String(runtime.getInputStream().readNBytes(7), StandardCharsets.UTF_8));
                assertEquals("", Files.readString(out), "the hook prints nothing");
                assertEquals(2, recorder.posts().size(), "two session starts");
                try (Stream<Path> locks = Files.list(tmp.resolve("watch-tmp"))) {
                    assertEquals(1, locks.count(), "one watcher for the process");
                }
                long killed = System.nanoTime();
                runtime.destroyForcibly();
                runtime.waitFor(10, TimeUnit.SECONDS);
                long deadline = killed + TimeUnit.SECONDS.toNanos(10);
                while (recorder.posts().size() < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                List<HookRecorder.Post> posts = recorder.posts();
                assertEquals(3, posts.size(), posts.toString());
                HookRecorder.Post exited = posts.get(2);
                assertEquals("{\"hook_event_name\":\"" + HookMapping.RUNTIME_EXITED + "\"}", exited.body());
                assertEquals("Bearer " + KEY, exited.headers().get("Authorization"), "the older variable still works");
                assertEquals("cc-w", exited.headers().get("X-Lifeline-Agent"));
                assertEquals("/v1/teams/t9/agents/cc-w/hooks/claude-code", exited.path());
                // The watcher posts, then removes its lock as it ends: the post can arrive first.
                long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (watchers(tmp.resolve("watch-tmp")) > 0 && System.nanoTime() < gone) {
                    Thread.sleep(20);
                }
                assertEquals(0, watchers(tmp.resolve("watch-tmp")), "the watcher is gone");
                Thread.sleep(1500); // the one interval a second watcher would have posted in
                assertEquals(3, recorder.posts().size(), "one report, from one watcher");
            } finally {
                runtime.destroyForcibly();
            }
        }
    }

    private record ShellRun(int exit, String stdout) {
    }

    private static ShellRun sh(String script, String stdin, Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("sh", "-c", script));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(false);
        pb.environment().remove("LIFELINE_API_KEY");
        pb.environment().remove("LIFELINE_DAEMON");
        pb.environment().putAll(env);
        Process p = pb.start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the forwarder finished");
        return new ShellRun(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
