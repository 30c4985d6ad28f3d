package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.StubServer;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Tag("e2e")
class LifelineCliTest {
    private static LifelineLocal local;
    private static LifelineClient client;

    @TempDir
    Path dir;

    /** {@code slept}: the waits between retries, in order (none: each call was tried once). */
    record Run(int exit, String out, String err, List<Duration> slept) {
    }

    @BeforeAll
    static void startLocal() throws Exception {
        local = LocalHarness.start();
        client = LocalHarness.client(local);
        noConfig = Files.createTempDirectory("lifeline-noconfig");
    }

    @AfterAll
    static void stopLocal() throws Exception {
        local.close();
    }

    /** No config file unless a test writes one: XDG_CONFIG_HOME points at an empty directory. */
    private static Path noConfig;

    private static Run run(String... args) {
        return runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", local.adminKey()), args);
    }

    private static Run runWith(Map<String, String> env, String... args) {
        return runIn(env, Path.of(""), args);
    }

    private static Run runIn(Map<String, String> env, Path workDir, String... args) {
        Map<String, String> e = new HashMap<>(env);
        e.putIfAbsent("XDG_CONFIG_HOME", noConfig.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<Duration> slept = new CopyOnWriteArrayList<>();
        CommandLine cl = new CommandLine(new LifelineCli(e, slept::add, workDir));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString(), slept);
    }

    @Test
    void help_onEveryCommand_printsUsageAndExitsZero() {
        for (String c : List.of("create-team", "mint-admin-key", "register", "join", "beat", "leave", "delete-agent", "status", "agents", "watch",
                "events", "revive", "pause", "resume", "daemon", "wake", "tasks", "tasks create", "tasks list",
                "tasks claim", "tasks complete", "keys", "keys create", "keys list", "keys revoke", "settings",
                "settings show", "settings set", "settings release-hold", "inbox", "revivals")) {
            List<String> args = new ArrayList<>(List.of(c.split(" ")));
            args.add("--help");
            Run r = run(args.toArray(String[]::new));
            assertEquals(0, r.exit(), c);
            assertTrue(r.out().contains("Usage: lifeline " + c), c + ": " + r.out());
        }
        // A group alone is bad usage, and says what to give.
        Run group = run("tasks");
        assertEquals(LifelineCli.USAGE, group.exit());
        assertTrue(group.err().contains("create, list, claim, complete"), group.err());
        assertTrue(run("--help").out().contains("Exit codes"));
    }

    @Test
    void registerJoinBeatStatusLeave_againstLocal_walksTheAgent() {
        Run reg = run("register", "cli-1", "--name", "CLI one", "--host", "h-cli");
        assertEquals(0, reg.exit(), reg.err());
        assertTrue(reg.out().contains("registered cli-1 (offline)"));
        assertTrue(run("join", "cli-1").out().contains("cli-1 ready"));
        Run beat = run("beat", "cli-1", "--status", "working");
        assertTrue(beat.out().contains("cli-1 working"), beat.out());
        Run status = run("status", "cli-1");
        assertTrue(status.out().contains("status:          working"), status.out());
        assertTrue(status.out().contains("host:            h-cli"));
        Run json = run("status", "cli-1", "--json");
        assertTrue(json.out().contains("\"agentId\" : \"cli-1\""), json.out());
        assertTrue(status.out().contains("deadline:        in "), status.out());
        assertTrue(run("leave", "cli-1", "--reason", "done").out().contains("cli-1 offline"));
        // An agent that left is judged by no deadline: none is shown, here or in the table.
        Run left = run("status", "cli-1");
        assertTrue(left.out().contains("deadline:        -\n"), left.out());
        String row = run("agents").out().lines().filter(l -> l.startsWith("cli-1 ")).findFirst().orElseThrow();
        assertTrue(row.matches("cli-1\\s+offline\\s+\\S+ ago\\s+-\\s+.*"), row);
    }

    @Test
    void agents_printsAPage_andTheCommandForTheNext_andAllPrintsEveryPage() {
        for (int i = 0; i < 3; i++) {
            assertEquals(0, run("register", "cli-page-" + i).exit());
        }
        Run page = run("agents", "--limit", "2");
        assertEquals(0, page.exit(), page.err());
        List<String> rows = page.out().lines().filter(l -> l.matches("\\S+\\s+(offline|ready|working|dead)\\b.*"))
                .toList();
        assertEquals(2, rows.size(), page.out());
        Matcher more = Pattern.compile("more: lifeline agents --limit 2 --cursor (\\S+)").matcher(page.out());
        assertTrue(more.find(), page.out());
        Run next = run("agents", "--limit", "2", "--cursor", more.group(1));
        assertEquals(0, next.exit(), next.err());
        assertFalse(next.out().contains(rows.get(0).split("\\s+")[0] + " "), "the next page starts after this one");

        Run all = run("agents", "--all", "--limit", "2");
        assertEquals(0, all.exit(), all.err());
        for (int i = 0; i < 3; i++) {
            assertTrue(all.out().contains("cli-page-" + i + " "), all.out());
        }
        assertFalse(all.out().contains("more:"), all.out());
        Run json = run("agents", "--limit", "1", "--json");
        assertTrue(json.out().contains("\"nextCursor\""), json.out());

        assertEquals(LifelineCli.USAGE, run("agents", "--limit", "0").exit());
        assertEquals(LifelineCli.USAGE, run("agents", "--all", "--cursor", more.group(1)).exit());
        Run bad = run("agents", "--cursor", "not-a-cursor");
        assertNotEquals(0, bad.exit());
        assertTrue(bad.err().contains("INVALID_QUERY") || bad.err().contains("cursor"), bad.err());
    }

    @Test
    void beatProgress_setsTheLastProgress_thatStatusShows_andAReasonWantsProgress() {
        run("register", "cli-progress");
        run("join", "cli-progress");
        assertTrue(run("status", "cli-progress").out().lines().noneMatch(l -> l.startsWith("  last progress:")));
        Run beat = run("beat", "cli-progress", "--status", "working", "--progress", "--stall-reason",
                "model stream silent");
        assertEquals(0, beat.exit(), beat.err());
        Run status = run("status", "cli-progress");
        assertTrue(status.out().contains("  last progress:   "), status.out());
        Run json = run("status", "cli-progress", "--json");
        assertTrue(json.out().contains("\"lastProgressAt\""), json.out());
        Run alone = run("beat", "cli-progress", "--stall-reason", "model stream silent");
        assertEquals(LifelineCli.USAGE, alone.exit(), alone.out());
        assertTrue(alone.err().contains("--stall-reason goes with --progress"), alone.err());
    }

    @Test
    void status_withoutAnId_isTheTeamOverview_notAnError() {
        run("register", "cli-overview");
        run("join", "cli-overview");
        Run team = run("status");
        assertEquals(0, team.exit(), team.err());
        Matcher m = Pattern.compile("^team: (\\d+) agent\\(s\\)(.*)$", Pattern.MULTILINE).matcher(team.out());
        assertTrue(m.find(), team.out());
        long listed = run("agents").out().lines().skip(1).count();
        assertEquals(listed, Long.parseLong(m.group(1)), team.out());
        assertTrue(m.group(2).matches(".*, \\d+ ready.*"), team.out());
    }

    @Test
    void deleteAgent_ofAnAgentThatLeft_removesIt_andOfAReadyOne_isRefused() {
        run("register", "cli-del");
        run("join", "cli-del");
        Run refused = run("delete-agent", "cli-del");
        assertEquals(LifelineCli.REFUSED, refused.exit());
        assertTrue(refused.err().contains("AGENT_NOT_RETIRABLE"), refused.err());
        run("leave", "cli-del");
        Run deleted = run("delete-agent", "cli-del");
        assertEquals(0, deleted.exit(), deleted.err());
        assertTrue(deleted.out().contains("cli-del deleted (it was offline)"), deleted.out());
        assertFalse(run("agents").out().contains("cli-del"));
    }

    @Test
    void beat_onOfflineAgent_rejoinsUnlessToldNot() {
        run("register", "cli-2");
        Run refused = run("beat", "cli-2", "--no-rejoin");
        assertEquals(LifelineCli.REFUSED, refused.exit());
        assertTrue(refused.err().contains("REJOIN_REQUIRED"), refused.err());
        Run healed = run("beat", "cli-2");
        assertEquals(0, healed.exit());
        assertTrue(healed.out().contains("(rejoined)"), healed.out());
    }

    @Test
    void agents_listsATableWithStatusAgeAndHost() {
        run("register", "cli-3", "--host", "h-3");
        run("join", "cli-3");
        Run r = run("agents");
        assertEquals(0, r.exit());
        assertTrue(r.out().startsWith("ID"), r.out());
        assertTrue(r.out().contains("LAST BEAT"));
        String line = r.out().lines().filter(l -> l.startsWith("cli-3 ")).findFirst().orElseThrow();
        assertTrue(line.contains("ready") && line.contains("ago") && line.contains("h-3"), line);
        assertTrue(run("agents", "--status", "offline").out().lines().noneMatch(l -> l.startsWith("cli-3 ")));
    }

    @Test
    void watch_withIterations_refreshesThatManyTimes() {
        run("register", "cli-w");
        Run r = run("watch", "--iterations", "2", "--interval", "50ms", "--no-clear");
        assertEquals(0, r.exit());
        assertEquals(2, r.out().lines().filter(l -> l.startsWith("lifeline watch")).count());
        assertTrue(r.out().contains("cli-w"));
    }

    @Test
    void pauseResumeEventsRevive_againstLocal_answer() throws Exception {
        run("register", "cli-p", "--host", "h-p");
        run("join", "cli-p");
        assertTrue(run("pause", "cli-p", "--for", "60", "--reason", "deploy").out().contains("paused until"));
        assertTrue(run("resume", "cli-p").out().contains("resumed"));
        assertEquals(2, run("pause").exit());
        Run revive = run("revive", "cli-p");
        assertEquals(LifelineCli.REFUSED, revive.exit(), "a ready agent cannot be revived");
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(10),
                () -> run("events").out().contains("cli-p offline -> ready")));
    }

    @Test
    void events_sinceUntilAgentTypeLimit_narrowTheAnswer_inHumanAndJsonOutput() throws Exception {
        client.register(RegisterAgent.of("cli-ev", "Ev", "worker").withStaleAfterSeconds(600));
        client.join("cli-ev");
        spinToNextMillisecond();
        client.heartbeat("cli-ev", Heartbeat.status("working"));
        spinToNextMillisecond();
        client.leave("cli-ev", "done");
        var mine = EventQuery.all().withAgent("cli-ev");
        assertTrue(LocalHarness.eventually(Duration.ofSeconds(10), () -> client.events(mine).count() >= 3));
        var events = client.events(mine).events(); // newest first, at the server's times
        assertEquals(3, events.size());
        String workingAt = events.get(1).at().toString();

        Run since = run("events", "--agent", "cli-ev", "--since", workingAt, "--json");
        assertEquals(0, since.exit(), since.err());
        var answer = LifelineClient.mapper().readTree(since.out());
        assertEquals(2, answer.get("count").asInt());
        assertEquals(events.get(0).eventId(), answer.at("/events/0/eventId").asText());
        assertEquals(events.get(1).eventId(), answer.at("/events/1/eventId").asText());

        Run window = run("events", "--agent", "cli-ev", "--since", workingAt, "--until", workingAt);
        assertEquals(0, window.exit(), window.err());
        assertEquals(List.of(workingAt + "  AgentStatusChanged  cli-ev ready -> working (report_working)"),
                window.out().lines().toList());

        // Relative times: all three happened within the hour, none of them an hour or more ago.
        Run hour = run("events", "--agent", "cli-ev", "--since", "1h", "--type", "AgentStatusChanged", "--limit", "2");
        assertEquals(0, hour.exit(), hour.err());
        List<String> lines = hour.out().lines().toList();
        assertEquals(2, lines.size(), hour.out());
        assertTrue(lines.get(0).contains("cli-ev working -> offline") && lines.get(1).contains("ready -> working"),
                hour.out());
        assertEquals("no events", run("events", "--agent", "cli-ev", "--until", "1h").out().strip());
        assertEquals("no events", run("events", "--agent", "cli-ev", "--type", "TasksReassigned").out().strip());
        assertTrue(run("events", "--help").out().contains("15m, 2h, 1d"));
    }

    @Test
    void events_badFilterValues_exitWithUsage_andSendNothing() throws Exception {
        try (StubServer stub = new StubServer()) {
            stub.otherwise(200, "{\"count\":0,\"events\":[]}");
            Map<String, String> env = Map.of("LIFELINE_URL", stub.url().toString(), "LIFELINE_KEY", "k");
            Map<List<String>, String> bad = new LinkedHashMap<>();
            bad.put(List.of("--since", "yesterday"), "neither an ISO-8601 time");
            bad.put(List.of("--since", "15x"), "neither an ISO-8601 time");
            bad.put(List.of("--since", "-5m"), "neither an ISO-8601 time");
            bad.put(List.of("--until", "2026-03-01"), "neither an ISO-8601 time");
            bad.put(List.of("--until", "2300-01-01T00:00:00Z"), "outside the times Lifeline takes");
            bad.put(List.of("--since", "1969-12-31T23:59:59Z"), "outside the times Lifeline takes");
            bad.put(List.of("--since", "+1000000000-01-01T00:00:00Z"), "outside the times Lifeline takes");
            bad.put(List.of("--since", "999999999d"), "outside the times Lifeline takes");
            bad.put(List.of("--since", "2026-03-02T00:00:00Z", "--until", "2026-03-01T00:00:00Z"),
                    "must not be after --until");
            bad.put(List.of("--since", "1h", "--until", "2h"), "must not be after --until");
            bad.put(List.of("--limit", "0"), "--limit must be 1..100");
            bad.put(List.of("--limit", "101"), "--limit must be 1..100");
            bad.put(List.of("--limit", "many"), "--limit");
            bad.put(List.of("--agent", "no way"), "--agent must be an agent id");
            bad.forEach((args, message) -> {
                List<String> argv = new ArrayList<>(List.of("events"));
                argv.addAll(args);
                Run r = runWith(env, argv.toArray(String[]::new));
                assertEquals(LifelineCli.USAGE, r.exit(), args + ": " + r.err());
                assertTrue(r.err().contains(message), args + ": " + r.err());
                assertEquals("", r.out(), args.toString());
            });
            assertEquals(List.of(), stub.seen(), "nothing was sent");
            // Good values of the same kinds are sent, so the stub would have seen the bad ones.
            Run ok = runWith(env, "events", "--since", "2026-03-01T13:00:00+01:00", "--until", "0s", "--agent", "a-1",
                    "--type", "AgentStatusChanged", "--limit", "100");
            assertEquals(0, ok.exit(), ok.err());
            assertEquals(1, stub.seen().size());
            assertTrue(stub.seen().get(0).query().startsWith("since=2026-03-01T12%3A00%3A00Z&until="),
                    stub.seen().get(0).query());
            assertTrue(stub.seen().get(0).query().endsWith("&agentId=a-1&type=AgentStatusChanged&limit=100"),
                    stub.seen().get(0).query());
        }
    }

    private static void spinToNextMillisecond() {
        long ms = System.currentTimeMillis();
        while (System.currentTimeMillis() <= ms) {
            Thread.onSpinWait();
        }
    }

    @Test
    void createTeam_withOperatorKey_printsAnAdminKeyThatWorks_once() {
        Run r = runWith(Map.of("LIFELINE_URL", local.url().toString()), "create-team", "cli-team", "--operator-key",
                local.operatorKey(), "--leader", "lead");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("Team cli-team created. Admin key (shown once"), r.out());
        String admin = r.out().lines().filter(l -> l.startsWith("ll_")).findFirst().orElseThrow();
        Run reg = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", admin), "register",
                "a1", "--team", "cli-team");
        assertEquals(0, reg.exit(), reg.err());
        Run settings = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", admin),
                "settings", "show", "--team", "cli-team");
        assertTrue(settings.out().contains("leader:                       lead"), settings.out());

        Run again = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_OPERATOR_KEY",
                local.operatorKey()), "create-team", "cli-team");
        assertEquals(LifelineCli.REFUSED, again.exit());
        assertTrue(again.err().contains("TEAM_EXISTS"), again.err());
        assertEquals("", again.out());
    }

    @Test
    void mintAdminKey_withOperatorKey_printsAnAdminKeyThatWorks_andTheLastAdminKeyCannotBeRevoked() {
        Map<String, String> operator = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_OPERATOR_KEY",
                local.operatorKey());
        Run team = runWith(operator, "create-team", "cli-mint");
        assertEquals(0, team.exit(), team.err());
        String first = team.out().lines().filter(l -> l.startsWith("ll_")).findFirst().orElseThrow();
        Map<String, String> asFirst = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", first);
        Run list = runWith(asFirst, "keys", "list", "--team", "cli-mint", "--json");
        String firstId = list.out().replaceAll("(?s).*\"keyId\" : \"([0-9a-f]{12})\".*", "$1");
        Run last = runWith(asFirst, "keys", "revoke", firstId, "--team", "cli-mint");
        assertEquals(LifelineCli.REFUSED, last.exit(), last.out());
        assertTrue(last.err().contains("LAST_ADMIN_KEY"), last.err());

        Run minted = runWith(operator, "mint-admin-key", "cli-mint", "--label", "ops");
        assertEquals(0, minted.exit(), minted.err());
        assertTrue(minted.out().contains("minted for team cli-mint"), minted.out());
        String second = minted.out().lines().filter(l -> l.startsWith("ll_")).findFirst().orElseThrow();
        Run revoke = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", second),
                "keys", "revoke", firstId, "--team", "cli-mint");
        assertEquals(0, revoke.exit(), revoke.err());

        Run unknown = runWith(operator, "mint-admin-key", "cli-no-such-team");
        assertEquals(LifelineCli.REFUSED, unknown.exit());
        assertTrue(unknown.err().contains("TEAM_NOT_FOUND"), unknown.err());
    }

    @Test
    void createTeam_jsonAnswerCarriesTheKey_andBadIdsOrNarrowKeysAreRefused() throws Exception {
        Run json = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_OPERATOR_KEY",
                local.operatorKey()), "create-team", "cli-json", "--json");
        assertEquals(0, json.exit(), json.err());
        var answer = LifelineClient.mapper().readTree(json.out());
        assertEquals("cli-json", answer.get("team").asText());
        assertEquals("admin", answer.path("adminKey").path("scope").asText());

        Run bad = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_OPERATOR_KEY",
                local.operatorKey()), "create-team", "no way");
        assertEquals(LifelineCli.REFUSED, bad.exit());
        assertTrue(bad.err().contains("INVALID_ID"), bad.err());
        // An admin key is not an operator key.
        Run narrow = runWith(Map.of("LIFELINE_URL", local.url().toString()), "create-team", "cli-narrow",
                "--operator-key", local.adminKey());
        assertEquals(LifelineCli.REFUSED, narrow.exit());
        assertTrue(narrow.err().contains("INSUFFICIENT_SCOPE"), narrow.err());
        // No operator key anywhere: bad usage, and nothing is sent.
        Run none = runIn(Map.of("LIFELINE_URL", local.url().toString()), dir, "create-team", "cli-none");
        assertEquals(LifelineCli.USAGE, none.exit());
        assertTrue(none.err().contains("needs an operator key"), none.err());
    }

    @Test
    void createTeam_picksUpLocalsOperatorKeyFile_onlyForALocalUrl() throws Exception {
        Files.createDirectories(dir.resolve(".lifeline"));
        Files.writeString(dir.resolve(".lifeline/operator.key"), local.operatorKey() + "\n");
        Run r = runIn(Map.of("LIFELINE_URL", local.url().toString()), dir, "create-team", "cli-file");
        assertEquals(0, r.exit(), r.err());
        // A remote URL never gets Local's key: there is no key to send.
        Run remote = runIn(Map.of("LIFELINE_URL", "https://lifeline.example.com"), dir, "create-team", "cli-file2");
        assertEquals(LifelineCli.USAGE, remote.exit());
    }

    private Path config(String... lines) throws Exception {
        Path xdg = dir.resolve("xdg");
        Files.createDirectories(xdg.resolve("lifeline"));
        Files.writeString(xdg.resolve("lifeline/config"), String.join("\n", lines) + "\n");
        return xdg;
    }

    /** The heartbeat URL. */
    @Nested
    class HeartbeatUrl {
        /**
         * With the API URL unreachable and the heartbeat URL Local's Function URL path, a beat that succeeds went to the
         * heartbeat URL, and a command that fails to connect went to the API URL. Each source of the setting in turn:
         * flag, environment, config file.
         */
        @Test
        void beat_goesToTheHeartbeatUrl_fromFlagEnvironmentOrFile_andEverythingElseToTheApiUrl() throws Exception {
            assertTrue(run("register", "cli-url", "--stale-after", "600").exit() == 0 && run("join", "cli-url").exit() == 0);
            String beats = local.heartbeatUrl().toString();
            String dead = "http://127.0.0.1:1";
            Map<String, String> keyOnly = Map.of("LIFELINE_URL", dead, "LIFELINE_KEY", local.adminKey());

            Run byFlag = runWith(keyOnly, "beat", "cli-url", "--status", "working", "--heartbeat-url", beats);
            assertEquals(0, byFlag.exit(), byFlag.err());
            assertTrue(byFlag.out().contains("cli-url working"), byFlag.out());

            Map<String, String> env = new HashMap<>(keyOnly);
            env.put("LIFELINE_HEARTBEAT_URL", beats);
            Run byEnv = runWith(env, "beat", "cli-url", "--status", "ready");
            assertEquals(0, byEnv.exit(), byEnv.err());
            assertEquals(LifelineCli.UNREACHABLE, runWith(env, "status", "cli-url").exit(), "status goes to the API URL");

            Path xdg = config("url = " + dead, "heartbeat_url = " + beats, "api_key = " + local.adminKey());
            Run byFile = runWith(Map.of("XDG_CONFIG_HOME", xdg.toString()), "beat", "cli-url");
            assertEquals(0, byFile.exit(), byFile.err());
            // The flag beats the environment: a dead heartbeat URL on the command line is used, and fails to connect.
            assertEquals(LifelineCli.UNREACHABLE, runWith(env, "beat", "cli-url", "--heartbeat-url", dead + "/x").exit());
            Run status = run("status", "cli-url");
            assertTrue(status.out().contains("status:          ready"), "the beats through the URL landed: " + status.out());
        }
    }

    /** Connection settings: flag > environment > config file. */
    @Nested
    class ConnectionSettings {
        @Test
        void config_fromXdgConfigHome_isUsedWhenNoFlagOrEnvironmentSaysOtherwise() throws Exception {
            Path xdg = config("# Lifeline", "url = " + local.url(), "api_key: " + local.adminKey(), "team=local");
            Run r = runWith(Map.of("XDG_CONFIG_HOME", xdg.toString()), "agents");
            assertEquals(0, r.exit(), r.err());
            // Without XDG_CONFIG_HOME, HOME/.config/lifeline/config.
            Files.createDirectories(dir.resolve(".config"));
            Files.move(xdg.resolve("lifeline"), dir.resolve(".config/lifeline"));
            assertEquals(0, runWith(Map.of("XDG_CONFIG_HOME", "", "HOME", dir.toString()), "agents").exit());
        }

        @Test
        void config_precedence_flagBeatsEnvironmentBeatsFile() throws Exception {
            Path xdg = config("url = http://127.0.0.1:1", "key = wrong-from-file");
            Map<String, String> fileOnly = Map.of("XDG_CONFIG_HOME", xdg.toString());
            assertEquals(LifelineCli.UNREACHABLE, runWith(fileOnly, "agents").exit(), "the file's url is used");

            Map<String, String> env = Map.of("XDG_CONFIG_HOME", xdg.toString(), "LIFELINE_URL", local.url().toString());
            Run envUrl = runWith(env, "agents");
            assertEquals(LifelineCli.REFUSED, envUrl.exit(), "env url wins; the file's key is sent");
            assertTrue(envUrl.err().contains("UNAUTHENTICATED"), envUrl.err());

            Map<String, String> envKey = new HashMap<>(env);
            envKey.put("LIFELINE_API_KEY", local.adminKey());
            assertEquals(0, runWith(envKey, "agents").exit(), "env key wins over the file's");
            assertEquals(LifelineCli.REFUSED, runWith(envKey, "agents", "--key", "wrong-from-flag").exit(),
                    "the flag wins over the environment");
            assertEquals(0, runWith(Map.of("XDG_CONFIG_HOME", xdg.toString(), "LIFELINE_URL", "http://127.0.0.1:1",
                    "LIFELINE_API_KEY", "wrong"), "agents", "--url", local.url().toString(), "--key", local.adminKey())
                    .exit(), "flags win over both");
            // LIFELINE_API_KEY is the name; the older LIFELINE_KEY still works, and loses to it.
            assertEquals(0, runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", local.adminKey()),
                    "agents").exit());
            assertEquals(0, runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", "old-wrong",
                    "LIFELINE_API_KEY", local.adminKey()), "agents").exit());
        }

        @Test
        void config_namedWithFlag_mustExist_andMalformedOrUnreadableFilesAreClearErrors() throws Exception {
            Map<String, String> env = Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", local.adminKey());
            Run missing = runWith(env, "agents", "--config", dir.resolve("nope").toString());
            assertEquals(LifelineCli.USAGE, missing.exit());
            assertTrue(missing.err().contains("does not exist"), missing.err());

            Path xdg = config("url = " + local.url(), "this line has no value");
            Run malformed = runWith(Map.of("XDG_CONFIG_HOME", xdg.toString(), "LIFELINE_API_KEY", local.adminKey()),
                    "agents");
            assertEquals(LifelineCli.USAGE, malformed.exit());
            assertTrue(malformed.err().contains("line 2") && malformed.err().contains("expected 'name = value'"),
                    malformed.err());
            assertEquals("", malformed.out());

            Files.writeString(dir.resolve("empty"), "url =\n");
            Run empty = runWith(env, "agents", "--config", dir.resolve("empty").toString());
            assertEquals(LifelineCli.USAGE, empty.exit());
            assertTrue(empty.err().contains("line 1: 'url' has no value"), empty.err());

            Files.writeString(dir.resolve("typo"), "urll = x\n");
            Run typo = runWith(env, "agents", "--config", dir.resolve("typo").toString());
            assertEquals(LifelineCli.USAGE, typo.exit());
            assertTrue(typo.err().contains("line 1: unknown setting 'urll'"), typo.err());

            Run unreadable = runWith(env, "agents", "--config", dir.toString()); // a directory cannot be read as a file
            assertEquals(LifelineCli.USAGE, unreadable.exit());
            assertTrue(unreadable.err().contains("cannot read config file"), unreadable.err());
        }
    }

    /** Tasks, keys, settings, inbox, revivals. */
    @Nested
    class TasksKeysSettingsInboxRevivals {
        @Test
        void tasks_createListClaimComplete_againstLocal() throws Exception {
            run("register", "cli-t");
            run("join", "cli-t");
            Run created = run("tasks", "create", "cli-task", "--title", "Summarise");
            assertEquals(0, created.exit(), created.err());
            assertTrue(created.out().contains("created task cli-task (pending)"), created.out());
            Run list = run("tasks", "list", "--status", "pending");
            assertTrue(list.out().startsWith("ID"), list.out());
            assertTrue(list.out().lines().anyMatch(l -> l.startsWith("cli-task ") && l.contains("Summarise")), list.out());
            Run claim = run("tasks", "claim", "cli-task", "--agent", "cli-t");
            assertEquals(0, claim.exit(), claim.err());
            assertTrue(claim.out().contains("in_progress") && claim.out().contains("cli-t working"), claim.out());
            Run again = run("tasks", "claim", "cli-task", "--agent", "cli-t");
            assertEquals(LifelineCli.REFUSED, again.exit());
            Run done = run("tasks", "complete", "cli-task", "--agent", "cli-t", "--result", "ok", "--json");
            assertEquals(0, done.exit(), done.err());
            var answer = LifelineClient.mapper().readTree(done.out());
            assertEquals("done", answer.path("task").path("status").asText());
            assertEquals("ready", answer.path("agentStatus").asText());
            assertEquals(LifelineCli.USAGE, run("tasks", "create", "no-title").exit(), "--title is required");
        }

        @Test
        void keys_createListRevoke_againstLocal() throws Exception {
            Run created = run("keys", "create", "--scope", "read", "--label", "cli-reader", "--json");
            assertEquals(0, created.exit(), created.err());
            var key = LifelineClient.mapper().readTree(created.out());
            String keyId = key.get("keyId").asText();
            String secret = key.get("key").asText();
            Run asReader = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_API_KEY", secret), "agents");
            assertEquals(0, asReader.exit(), asReader.err());
            Run list = run("keys", "list");
            assertTrue(list.out().lines().anyMatch(l -> l.startsWith(keyId) && l.contains("cli-reader")), list.out());
            assertTrue(!list.out().contains(secret));
            assertTrue(run("keys", "revoke", keyId).out().contains("revoked " + keyId));
            // (The revoked key itself may still pass the authorizer's cache, as on API Gateway, for ReauthorizeEvery.)
            assertTrue(run("keys", "list").out().lines().noneMatch(l -> l.startsWith(keyId)));
            assertEquals(LifelineCli.REFUSED, run("keys", "revoke", keyId).exit(), "KEY_NOT_FOUND");
            assertEquals(LifelineCli.REFUSED, run("keys", "create", "--scope", "operator").exit());
        }

        @Test
        void settings_showSet_andInboxRevivals_againstLocal() {
            Run set = run("settings", "set", "--leader", "cli-lead", "--self-preservation-min-alive", "5");
            assertEquals(0, set.exit(), set.err());
            assertTrue(set.out().contains("leader:                       cli-lead"), set.out());
            assertTrue(run("settings", "show").out().contains("self-preservation min alive:  5"));
            assertTrue(run("settings", "set", "--no-leader").out().contains("leader:                       -"));
            assertEquals(LifelineCli.USAGE, run("settings", "set").exit(), "nothing to change");
            Run badShare = run("settings", "set", "--self-preservation-threshold", "2");
            assertEquals(LifelineCli.REFUSED, badShare.exit());
            assertTrue(badShare.err().contains("INVALID_FIELD"), badShare.err());

            run("register", "cli-i", "--host", "h-i");
            Run inbox = run("inbox", "cli-i");
            assertEquals(0, inbox.exit(), inbox.err());
            assertTrue(inbox.out().contains("no notices for cli-i"), inbox.out());
            Run revivals = run("revivals", "cli-i", "--json");
            assertEquals(0, revivals.exit(), revivals.err());
            assertTrue(revivals.out().contains("\"revivals\" : [ ]"), revivals.out());
            assertEquals(LifelineCli.REFUSED, run("inbox", "no-such-agent").exit());
        }

        @Test
        void anyCommand_whenLifelineUnreachable_exitsThree() {
            Run r = runWith(Map.of("LIFELINE_URL", "http://127.0.0.1:1", "LIFELINE_KEY", "k"), "agents");
            assertEquals(LifelineCli.UNREACHABLE, r.exit());
        }

        /** A write (here a heartbeat) rides out a Lifeline that is briefly down: it retries, and says so at once. */
        @Test
        void aWrite_whenLifelineUnreachable_saysSoAtOnceWithARetryHint_andNoStackTrace() {
            Run r = runWith(Map.of("LIFELINE_URL", "http://127.0.0.1:1", "LIFELINE_KEY", "k"), "beat", "cli-down");
            assertEquals(LifelineCli.UNREACHABLE, r.exit());
            assertEquals(3, r.slept().size(), "three retries after the first attempt: " + r.slept());
            List<String> lines = r.err().lines().toList();
            assertEquals(4, lines.size(), r.err());
            assertEquals("lifeline: cannot reach http://127.0.0.1:1 (connection refused), retrying in 2 s (attempt 2 of 4; "
                    + "is Lifeline Local running?)", lines.get(0));
            // 4 s and 8 s, each plus up to 20 % jitter
            assertTrue(lines.get(2).matches(".*retrying in (8|9|10) s \\(attempt 4 of 4;.*"), lines.get(2));
            assertEquals("lifeline: Cannot reach Lifeline at http://127.0.0.1:1 (connection refused)", lines.get(3));
            assertTrue(r.err().lines().noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception")), r.err());
        }

        /**
         * A read against a Local that is down (a closed port: connection refused) fails on its first attempt, with one
         * line naming the URL and how to start Local; no retry notice, no wait. Any other URL (127.0.0.2 is not one the
         * CLI takes for Local's) asks whether the URL is right instead.
         */
        @Test
        void aRead_whenNothingListens_failsOnItsFirstAttempt_namingTheUrlAndHowToStartLocal() {
            for (String[] read : List.of(new String[] {"agents"}, new String[] {"status", "cli-down"},
                    new String[] {"events"}, new String[] {"tasks", "list"})) {
                Run r = runWith(Map.of("LIFELINE_URL", "http://127.0.0.1:1", "LIFELINE_KEY", "k"), read);
                String what = String.join(" ", read);
                assertEquals(LifelineCli.UNREACHABLE, r.exit(), what + ": " + r.err());
                assertEquals(List.of(), r.slept(), what + ": no retry");
                assertEquals(List.of("lifeline: Cannot reach Lifeline at http://127.0.0.1:1 (connection refused); is Lifeline "
                        + "Local running? Start it with: java -jar infra/local/target/lifeline-local.jar"),
                        r.err().lines().toList(), what);
            }
            Run remote = runWith(Map.of("LIFELINE_URL", "http://127.0.0.2:1", "LIFELINE_KEY", "k"), "agents");
            assertEquals(LifelineCli.UNREACHABLE, remote.exit(), remote.err());
            assertEquals(List.of(), remote.slept());
            assertEquals(List.of("lifeline: Cannot reach Lifeline at http://127.0.0.2:1 (connection refused); is the URL "
                    + "right?"), remote.err().lines().toList());
        }

        @Test
        void wake_onAMissingFile_printsOneLineAndExitsWithUsage() {
            Run r = run("wake", dir.resolve("nowhere/heartbeat.md").toString(), "--agent", "wake-missing");
            assertEquals(LifelineCli.USAGE, r.exit());
            assertEquals(1, r.err().lines().count(), r.err());
            assertTrue(r.err().startsWith("lifeline: no heartbeat.md at " + dir.resolve("nowhere/heartbeat.md")), r.err());
            assertEquals("", r.out());
        }

        @Test
        void wake_forAnUnregisteredAgent_runsTheFileThenSaysInOneLineThatTheAgentIsNotRegistered() throws Exception {
            Path file = dir.resolve("heartbeat.md");
            Files.writeString(file, String.join("\n",
                    "---", "version: 1", "---", "", "## Pending Actions", "", "### [HIGH] Say hello", "- **id**: hello-1",
                    "- **type**: shell", "- **command**: echo hello", "- **schedule**: every:1h", ""));
            ByteArrayOutputStream jvmErr = new ByteArrayOutputStream();
            PrintStream realErr = System.err;
            System.setErr(new PrintStream(jvmErr, true, StandardCharsets.UTF_8));
            Run r;
            try {
                r = run("wake", file.toString(), "--agent", "wake-nobody");
            } finally {
                System.setErr(realErr);
            }
            assertEquals(LifelineCli.REFUSED, r.exit());
            assertTrue(r.out().contains("ok     hello-1"), r.out());
            assertEquals(List.of("lifeline: heartbeat not sent: agent 'wake-nobody' is not registered in team 'local' "
                    + "(lifeline register wake-nobody first) (404 AGENT_NOT_FOUND)"), r.err().lines().toList());
            assertEquals("", jvmErr.toString(StandardCharsets.UTF_8), "nothing else, no stack trace");
        }

        @Test
        void anyCommand_withBadKey_exitsOneWithCode() {
            Run r = runWith(Map.of("LIFELINE_URL", local.url().toString(), "LIFELINE_KEY", "wrong"), "agents");
            assertEquals(LifelineCli.REFUSED, r.exit());
            assertTrue(r.err().contains("UNAUTHENTICATED"), r.err());
        }

        @Test
        void daemon_withAnExitingCommand_reportsCrashRestartsAndKeepsOthersAlive() throws Exception {
            run("register", "cli-d1", "--host", "h-d");
            run("register", "cli-d2", "--host", "h-d");
            // A full second between the two rounds: on a busy machine `exit 3` may not have exited 300 ms after start.
            Run r = run("daemon", "--host", "h-d", "--agent", "cli-d1=sleep 30", "--agent", "cli-d2=exit 3",
                    "--interval", "1s", "--iterations", "2", "--log-dir", dir.toString());
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("crash reported: cli-d2"), r.out());
            assertTrue(r.out().contains("restarted: cli-d2"), r.out());
            assertTrue(r.out().contains("joined: cli-d1"), r.out());
            // The end of --iterations is a stop: the commands stop, then every agent leaves.
            assertTrue(r.out().contains("daemon stopped: 2 of 2 agent(s) left (offline)"), r.out());
            assertTrue(r.out().contains("left: cli-d1") && r.out().contains("left: cli-d2"), r.out());
            assertEquals("offline", client.agent("cli-d1").status());
            // The history of changes before the newest comes from the outbox, a moment after the change: wait for it.
            assertTrue(LocalHarness.eventually(Duration.ofSeconds(20),
                    () -> client.transitions("cli-d2", 10).transitions().stream()
                            .anyMatch(t -> "reported_failure".equals(t.trigger())
                                    && t.reason().contains("exited with status 3"))),
                    () -> "no reported_failure in " + client.transitions("cli-d2", 10).transitions());
        }

        @Test
        void daemon_withNoLeaveOnStop_stopsWithoutLeaving_andSaysSo() {
            run("register", "cli-nl", "--host", "h-nl");
            Run r = run("daemon", "--host", "h-nl", "--agent", "cli-nl=sleep 30", "--interval", "1s", "--iterations", "1",
                    "--no-leave-on-stop", "--log-dir", dir.toString());
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("did not leave (--no-leave-on-stop)"), r.out());
            assertEquals("ready", client.agent("cli-nl").status());
        }

        @Test
        void daemon_withRestartPolicies_namesThem_refusesAnUnknownOne_andAFinishedCommandLeavesInsteadOfCrashing() {
            run("register", "cli-rp", "--host", "h-rp");
            Run bad = run("daemon", "--host", "h-rp", "--agent", "cli-rp=sleep 30", "--restart", "sometimes",
                    "--iterations", "1");
            assertEquals(LifelineCli.USAGE, bad.exit(), bad.out());
            assertTrue(bad.err().contains("--restart sometimes: give on-failure, always or no"), bad.err());
            Run stranger = run("daemon", "--host", "h-rp", "--agent", "cli-rp=sleep 30", "--restart", "nobody=always",
                    "--iterations", "1");
            assertEquals(LifelineCli.USAGE, stranger.exit(), stranger.out());

            Run r = run("daemon", "--host", "h-rp", "--agent", "cli-rp=exit 0", "--restart", "cli-rp=always",
                    "--interval", "1s", "--iterations", "2", "--log-dir", dir.toString());
            assertEquals(0, r.exit(), r.err());
            assertTrue(r.out().contains("; restart on-failure, cli-rp: always"), r.out());
            assertTrue(r.out().contains("exited: cli-rp: its command finished: exited with status 0; it left (offline), "
                    + "and starts again (--restart always)"), r.out());
            assertTrue(!r.out().contains("crash reported: cli-rp"), r.out());
            assertTrue(client.allTransitions("cli-rp").stream().noneMatch(t -> t.to().startsWith("dead")),
                    () -> client.allTransitions("cli-rp").toString());
        }

        @Test
        @Timeout(value = 90, unit = TimeUnit.SECONDS)
        void daemon_onSigterm_stopsItsCommandThenLeavesItsAgent() throws Exception {
            run("register", "cli-term", "--host", "h-term");
            Path pidFile = dir.resolve("child.pid");
            // The real command line in its own JVM, so that SIGTERM reaches it the way Ctrl-C or a service manager does.
            ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), Main.class.getName(), "daemon", "--host", "h-term",
                    "--agent", "cli-term=echo $$ > '" + pidFile + "'; exec sleep 300", "--interval", "1s")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.out").toFile());
            pb.environment().put("LIFELINE_URL", local.url().toString());
            pb.environment().put("LIFELINE_KEY", local.adminKey());
            pb.environment().put("XDG_CONFIG_HOME", noConfig.toString());
            Process daemon = pb.start();
            try {
                assertTrue(LocalHarness.eventually(Duration.ofSeconds(40),
                        () -> "ready".equals(client.agent("cli-term").status()) && Files.exists(pidFile)),
                        "the daemon joined its agent");
                long child = Long.parseLong(Files.readString(pidFile).trim());
                daemon.destroy(); // SIGTERM
                assertTrue(daemon.waitFor(30, TimeUnit.SECONDS), "the daemon exits after SIGTERM");
                String out = Files.readString(dir.resolve("daemon.out"));
                assertTrue(out.contains("daemon stopped: 1 of 1 agent(s) left (offline)"), out);
                assertEquals("offline", client.agent("cli-term").status());
                assertEquals("leave", client.agent("cli-term").lastTransition().trigger());
                assertTrue(ProcessHandle.of(child).map(h -> !h.isAlive()).orElse(true), "the command was stopped");
            } finally {
                daemon.destroyForcibly();
            }
        }

        @Test
        void wake_withDueShellAction_runsItWritesItBackAndHeartbeatsUntilTheNextWake() throws Exception {
            assertEquals(0, run("register", "wake-1", "--name", "Waker").exit());
            Path file = dir.resolve("heartbeat.md");
            Files.writeString(file, String.join("\n",
                    "---", "version: 1", "status: idle", "---", "", "# Heartbeat", "", "## Pending Actions", "",
                    "### [HIGH] Say hello", "- **id**: hello-1", "- **type**: shell", "- **command**: echo hello",
                    "- **schedule**: every:1h", "- **status**: pending", ""));
            Instant before = Instant.now();
            Run r = run("wake", file.toString(), "--agent", "wake-1");
            assertEquals(0, r.exit(), r.out() + r.err());
            assertTrue(r.out().contains("ok     hello-1"), r.out());
            String written = Files.readString(file);
            assertTrue(written.contains("- **status**: completed"), written);
            assertTrue(written.contains("next_wake:"), written);
            // The agent was joined by the wake's heartbeat and is expected back at the next wake (an hour away).
            var agent = client.agent("wake-1");
            assertEquals("ready", agent.status());
            Duration ahead = Duration.between(before, agent.deadline());
            assertTrue(ahead.compareTo(Duration.ofMinutes(59)) > 0
                    && ahead.compareTo(Duration.ofMinutes(61)) < 0, "deadline " + agent.deadline());
        }

        @Test
        void wake_withMalformedFile_namesTheLineAndLeavesTheFileAlone() throws Exception {
            Path file = dir.resolve("heartbeat.md");
            String text = String.join("\n", "---", "version: 1", "---", "", "## Pending Actions", "",
                    "### [URGENT] Bad", "- **id**: bad-1", "- **type**: shell", "");
            Files.writeString(file, text);
            Run r = run("wake", file.toString());
            assertEquals(LifelineCli.REFUSED, r.exit());
            assertTrue(r.err().contains("line 7"), r.err());
            assertEquals(text, Files.readString(file));
        }
    }
}
