package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.bridge.OpencodeApi;
import io.lifeline.client.bridge.OpencodeBridge;
import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code lifeline bridge ...}: agent runtimes' event streams as Lifeline heartbeats. */
@Command(name = "bridge", mixinStandardHelpOptions = true,
        description = "Turn an agent runtime's events into heartbeats, error reports and session rotations.",
        subcommands = {BridgeCommand.Opencode.class})
final class BridgeCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

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
        @Option(names = "--opencode", paramLabel = "URL", description = "The opencode server (default "
                + "http://127.0.0.1:4096; env OPENCODE_URL)")
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
            String defaultTeam = global.team(env);
            Map<String, AgentRef> given = new LinkedHashMap<>();
            for (String m : maps) {
                int eq = m.indexOf('=');
                if (eq <= 0 || eq == m.length() - 1) {
                    throw new ParameterException(spec.commandLine(), "--map wants SESSION=AGENT or "
                            + "SESSION=TEAM/AGENT, got '" + m + "'");
                }
                String agent = m.substring(eq + 1);
                int slash = agent.indexOf('/');
                given.put(m.substring(0, eq), slash > 0 ? new AgentRef(agent.substring(0, slash),
                        agent.substring(slash + 1)) : new AgentRef(defaultTeam, agent));
            }
            Duration every;
            try {
                every = duration(interval);
            } catch (NumberFormatException e) {
                throw new ParameterException(spec.commandLine(), "--interval: not a duration: '" + interval + "'");
            }
            String url = GlobalOptions.first(opencodeUrl, env.get("OPENCODE_URL"), "http://127.0.0.1:4096");
            URI opencode;
            try {
                opencode = URI.create(url);
            } catch (IllegalArgumentException e) {
                throw new ConfigFile.ConfigException("not a URL: '" + url + "'");
            }
            String apiKey = global.key(env);
            global.client(env, sleeper(), defaultTeam, apiKey); // a bad Lifeline URL is reported before starting
            RetryPolicy quick = new RetryPolicy(1, Duration.ofMillis(500), 0.2, Duration.ofSeconds(5),
                    () -> ThreadLocalRandom.current().nextDouble());
            Map<String, LifelineClient> byTeam = new ConcurrentHashMap<>();
            OpencodeBridge bridge = new OpencodeBridge(new OpencodeApi(opencode, env.get("OPENCODE_SERVER_PASSWORD")),
                    team -> byTeam.computeIfAbsent(team, t -> LifelineClient.builder().url(global.url(env))
                            .heartbeatUrl(global.heartbeatUrl(env)).team(t)
                            .apiKey(apiKey).retry(quick).sleeper(sleeper()).build()),
                    given, every, Clock.systemUTC(), sleeper(), line -> {
                        err().println("lifeline bridge: " + line);
                        err().flush();
                    });
            ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "lifeline-bridge-flush");
                t.setDaemon(true);
                return t;
            });
            long tick = Math.max(100, every.toMillis() / 4);
            timer.scheduleWithFixedDelay(bridge::flushDue, tick, tick, TimeUnit.MILLISECONDS);
            Runtime.getRuntime().addShutdownHook(new Thread(bridge::close, "lifeline-bridge-stop"));
            out().println("lifeline bridge: following " + opencode + "/event (at most one beat per agent per "
                    + every.toMillis() + " ms)");
            out().flush();
            try {
                bridge.run();
            } finally {
                timer.shutdownNow();
            }
            return 0;
        }
    }
}
