package io.lifeline.client.cli;

import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.daemon.AgentRuntime;
import io.lifeline.client.daemon.RestartPolicy;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code lifeline daemon}'s options, read and checked before anything is sent or started: the round interval (null:
 * the server's advice), the crash loop's window and backoff, each agent's runtime, the restart policies, and the
 * opencode bridge's settings (null: no bridge), the stall threshold (null: not watched) and whether a stall restarts.
 * A wrong one is one line on stderr and the usage exit code.
 */
record DaemonSettings(Duration every, Duration window, Duration backoff, Map<String, AgentRuntime> runtimes,
        RestartPolicy policy, Map<String, RestartPolicy> policies, Bridge bridge, Duration stallAfter,
        boolean restartOnStall) {

    /** The longest --restart-backoff, and the cap of its doubling. */
    static final Duration MAX_BACKOFF = Duration.ofMinutes(5);

    /** The opencode bridge the daemon runs: its server, its session maps, its pace. */
    record Bridge(URI url, Map<String, AgentRef> maps, Duration every) {
    }

    /** The options read, or null after one line on {@code err} when one is wrong. */
    static DaemonSettings read(DaemonOptions c, GlobalOptions global, CommandSpec spec, Map<String, String> env,
            PrintWriter err) {
        Duration every;
        Duration window;
        Duration backoff;
        Duration stallAfter;
        try {
            stallAfter = "off".equals(c.stallAfter) ? null : BaseCommand.duration(c.stallAfter);
            every = c.interval == null ? null : BaseCommand.duration(c.interval);
            window = BaseCommand.duration(c.crashWindow);
            backoff = BaseCommand.duration(c.restartBackoff);
        } catch (NumberFormatException e) {
            err.println("lifeline: --interval, --crash-window, --restart-backoff and --stall-after take a duration "
                    + "such as 2s or 10m");
            return null;
        }
        if (c.localPort < 0 || c.localPort > 65535) {
            err.println("lifeline: --local-port is a port number, 1 to 65535 (0: a free one)");
            return null;
        }
        if (c.maxCrashes < 1 || window.isZero() || window.isNegative() || backoff.isNegative()
                || backoff.compareTo(MAX_BACKOFF) > 0) {
            err.println("lifeline: --max-crashes must be at least 1, --crash-window positive, --restart-backoff "
                    + "between 0 and 5m");
            return null;
        }
        if (stallAfter != null && (stallAfter.isZero() || stallAfter.isNegative())
                || !"restart".equals(c.onStall) && !"alert".equals(c.onStall)) {
            err.println("lifeline: --stall-after must be positive (or off), --on-stall restart or alert");
            return null;
        }
        String opencode = GlobalOptions.first(c.opencodeUrl, global.file(env).get("opencode_url"));
        Bridge bridge = null;
        if (opencode != null) { // a bad bridge setting is refused before any command starts
            bridge = new Bridge(BridgeCommand.opencodeUrl(opencode),
                    BridgeCommand.maps(c.opencodeMaps, global.team(env), "--opencode-map", spec),
                    BridgeCommand.interval(c.opencodeInterval, "--opencode-interval", spec));
        } else if (!c.opencodeMaps.isEmpty()) {
            err.println("lifeline: --opencode-map needs the bridge: give --opencode URL (or opencode_url in the "
                    + "config file)");
            return null;
        }
        Map<String, AgentRuntime> runtimes = runtimes(c, err);
        if (runtimes == null) {
            return null;
        }
        Map<String, RestartPolicy> policies = new LinkedHashMap<>();
        RestartPolicy policy = policies(c, policies, err);
        return policy == null ? null : new DaemonSettings(every, window, backoff, runtimes, policy, policies, bridge,
                stallAfter, "restart".equals(c.onStall));
    }

    /** Each --runtime ID=RUNTIME, or null after one line on {@code err}. */
    private static Map<String, AgentRuntime> runtimes(DaemonOptions c, PrintWriter err) {
        Map<String, AgentRuntime> runtimeOf = new LinkedHashMap<>();
        for (Map.Entry<String, String> r : c.runtimes.entrySet()) {
            if (!c.agents.containsKey(r.getKey())) {
                err.println("lifeline: --runtime " + r.getKey() + "=" + r.getValue() + " names no --agent: give "
                        + "--agent " + r.getKey() + "=COMMAND too");
                return null;
            }
            AgentRuntime rt = AgentRuntime.fromWire(r.getValue()).orElse(null);
            if (rt == null) {
                err.println("lifeline: --runtime " + r.getKey() + "=" + r.getValue() + ": the runtime is one of "
                        + "claude-code, codex, gemini, opencode");
                return null;
            }
            runtimeOf.put(r.getKey(), rt);
        }
        return runtimeOf;
    }

    /**
     * The restart policy for every agent (answered) and each agent's own (put in {@code policyOf}), from
     * --no-restart-on-exit and each --restart; null after one line on {@code err}.
     */
    private static RestartPolicy policies(DaemonOptions c, Map<String, RestartPolicy> policyOf, PrintWriter err) {
        RestartPolicy policy = c.noRestart ? RestartPolicy.NO : RestartPolicy.ON_FAILURE;
        for (String r : c.restart) {
            int eq = r.indexOf('=');
            String id = eq < 0 ? null : r.substring(0, eq);
            RestartPolicy p = RestartPolicy.fromWire(eq < 0 ? r : r.substring(eq + 1)).orElse(null);
            if (p == null || id != null && !c.agents.containsKey(id)) {
                err.println("lifeline: --restart " + r + ": give on-failure, always or no, for every agent or as "
                        + "ID=POLICY for an --agent");
                return null;
            }
            if (id == null) {
                policy = p;
            } else {
                policyOf.put(id, p);
            }
        }
        return policy;
    }

    /** Whether the daemon listens on 127.0.0.1 (local beats, a runtime's hooks, a fixed port). */
    boolean localChannel(DaemonOptions c) {
        return c.localBeats || !runtimes.isEmpty() || c.localPort != 0;
    }

    /** "on-failure, a1: always". */
    String restarts() {
        StringBuilder s = new StringBuilder(policy.wire());
        policies.forEach((id, p) -> s.append(", ").append(id).append(": ").append(p.wire()));
        return s.toString();
    }
}
