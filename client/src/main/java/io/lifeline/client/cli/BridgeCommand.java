package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.Sleeper;
import io.lifeline.client.bridge.OpencodeApi;
import io.lifeline.client.bridge.OpencodeBridge;
import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.bridge.RunningBridge;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code lifeline bridge ...}: agent runtimes' event streams as Lifeline heartbeats. */
@Command(name = "bridge", mixinStandardHelpOptions = true,
        description = "Turn an agent runtime's events into heartbeats, error reports and session rotations.",
        subcommands = {BridgeCommand.Opencode.class})
final class BridgeCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Give a runtime: lifeline bridge opencode --help");
    }

    @Command(name = "opencode", mixinStandardHelpOptions = true,
            description = {"Subscribe to an opencode server's event stream (opencode serve): busy sessions beat as "
                    + "working, idle ones as ready, tool calls as sdk_tool_execute; session errors go to Lifeline's "
                    + "errors route, and a context-limit error rotates the session (a new session with a "
                    + "continuation prompt). Sessions map to agents by --map or by the title "
                    + "teams::<team>::agent::<agentId>; other sessions are ignored. Runs until stopped."})
    static final class Opencode extends BaseCommand {
        @Option(names = "--opencode", paramLabel = "URL", description = "The opencode server (env OPENCODE_URL, "
                + "config opencode_url; default http://127.0.0.1:4096)")
        String opencodeUrl;

        @Option(names = "--map", paramLabel = "SESSION=AGENT", description = "Map a session to an agent (AGENT or "
                + "TEAM/AGENT); repeatable; wins over the title convention")
        List<String> maps = new ArrayList<>();

        @Option(names = "--interval", description = "At most one beat per agent per interval, status changes "
                + "excepted (default 10s)")
        String interval = "10s";

        @Override
        int run() {
            Map<String, String> env = env();
            Map<String, AgentRef> given = maps(maps, global.team(env), "--map", spec);
            Duration every = interval(interval, "--interval", spec);
            URI opencode = opencodeUrl(GlobalOptions.first(opencodeUrl, env.get("OPENCODE_URL"),
                    global.file(env).get("opencode_url"), "http://127.0.0.1:4096"));
            global.client(env, sleeper(), global.team(env), global.key(env)); // a bad Lifeline URL: reported first
            Consumer<String> say = line -> {
                err().println("lifeline bridge: " + line);
                err().flush();
            };
            RunningBridge running = RunningBridge.start(bridge(global, env, sleeper(), opencode, given, every, say),
                    every, "lifeline-bridge", say);
            Runtime.getRuntime().addShutdownHook(new Thread(running::close, "lifeline-bridge-stop"));
            out().println("lifeline bridge: following " + opencode + "/event (at most one beat per agent per "
                    + every.toMillis() + " ms)");
            out().flush();
            try {
                running.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running.close();
            }
            return 0;
        }
    }

    /** {@code SESSION=AGENT} or {@code SESSION=TEAM/AGENT} options as the bridge's map (AGENT alone: the team given). */
    static Map<String, AgentRef> maps(List<String> maps, String defaultTeam, String option,
            CommandLine.Model.CommandSpec spec) {
        Map<String, AgentRef> given = new LinkedHashMap<>();
        for (String m : maps) {
            int eq = m.indexOf('=');
            if (eq <= 0 || eq == m.length() - 1) {
                throw new ParameterException(spec.commandLine(), option + " wants SESSION=AGENT or "
                        + "SESSION=TEAM/AGENT, got '" + m + "'");
            }
            String agent = m.substring(eq + 1);
            int slash = agent.indexOf('/');
            given.put(m.substring(0, eq), slash > 0 ? new AgentRef(agent.substring(0, slash),
                    agent.substring(slash + 1)) : new AgentRef(defaultTeam, agent));
        }
        return given;
    }

    static Duration interval(String text, String option, CommandLine.Model.CommandSpec spec) {
        try {
            Duration d = BaseCommand.duration(text);
            if (d.isZero() || d.isNegative()) {
                throw new NumberFormatException(text);
            }
            return d;
        } catch (NumberFormatException e) {
            throw new ParameterException(spec.commandLine(), option + ": not a duration: '" + text + "'");
        }
    }

    static URI opencodeUrl(String url) {
        try {
            URI u = URI.create(url);
            if (u.getScheme() == null || u.getHost() == null) {
                throw new IllegalArgumentException(url);
            }
            return u;
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.ConfigException("not a URL: '" + url + "'");
        }
    }

    /**
     * The opencode bridge with the connection settings of every command: per team, a client to the API URL and
     * (when one is configured) the heartbeat URL, with the API key; a beat waits for at most one quick retry.
     */
    static OpencodeBridge bridge(GlobalOptions global, Map<String, String> env, Sleeper sleeper,
            URI opencode, Map<String, AgentRef> given, Duration every, Consumer<String> log) {
        String apiKey = global.key(env);
        RetryPolicy quick = new RetryPolicy(1, Duration.ofMillis(500), 0.2, Duration.ofSeconds(5),
                () -> ThreadLocalRandom.current().nextDouble());
        Map<String, LifelineClient> byTeam = new ConcurrentHashMap<>();
        return new OpencodeBridge(new OpencodeApi(opencode, env.get("OPENCODE_SERVER_PASSWORD")),
                team -> byTeam.computeIfAbsent(team, t -> LifelineClient.builder().url(global.url(env))
                        .heartbeatUrl(global.heartbeatUrl(env)).team(t).apiKey(apiKey).retry(quick).sleeper(sleeper)
                        .build()),
                given, every, Clock.systemUTC(), sleeper, log);
    }
}
