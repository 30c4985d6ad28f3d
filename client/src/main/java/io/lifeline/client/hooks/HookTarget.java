package io.lifeline.client.hooks;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.hooks.HookMapping;
import io.lifeline.hooks.HookRuntime;
import java.net.URI;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where one runtime's hooks send their events: straight to Lifeline ({@code lifeline} is the API base or the
 * heartbeat Function URL, baked into the runtime's settings at install time) or, when {@code lifeline} is null, to
 * the host daemon found at hook time in {@value #DAEMON_ENV}. The API key is never part of a target: a forwarder
 * reads {@value #KEY_ENV} from its environment each time it runs.
 */
public record HookTarget(HookRuntime runtime, String agentId, String team, URI lifeline) {
    /** The environment variable the forwarders read the agent's API key from, when they run. */
    public static final String KEY_ENV = "LIFELINE_API_KEY";
    /**
     * The older name of the key's variable, still read by the CLI and, when {@value #KEY_ENV} is unset, by the curl
     * forwarders and opencode's plugin. Claude Code's HTTP hooks cannot fall back: a header names one variable.
     */
    public static final String OLD_KEY_ENV = "LIFELINE_KEY";
    /** The daemon's loopback channel ({@code lifeline daemon} sets it for the commands it runs). */
    public static final String DAEMON_ENV = "LIFELINE_DAEMON";
    /** Names the agent on every forwarded event; also how an uninstall knows Lifeline's entries from others. */
    public static final String AGENT_HEADER = "X-Lifeline-Agent";
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    public HookTarget {
        if (agentId == null || !ID.matcher(agentId).matches()) {
            throw new IllegalArgumentException("--agent must be an agent id ([A-Za-z0-9._-]{1,64}), not '" + agentId
                    + "'");
        }
        if (team == null || !ID.matcher(team).matches()) {
            throw new IllegalArgumentException("the team must be a team id ([A-Za-z0-9._-]{1,64}), not '" + team
                    + "'");
        }
        if (lifeline != null) {
            String s = lifeline.toString();
            if (!("http".equals(lifeline.getScheme()) || "https".equals(lifeline.getScheme()))
                    || lifeline.getHost() == null || lifeline.getRawQuery() != null || lifeline.getRawFragment() != null
                    || !s.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '\'' && c != '"' && c != '\\'
                    && c != '`')) {
                throw new IllegalArgumentException("Lifeline's URL must be an http(s) URL without a query, quotes or "
                        + "spaces, not '" + s + "'");
            }
        }
    }

    public static HookTarget direct(HookRuntime runtime, String agentId, String team, URI lifeline) {
        return new HookTarget(runtime, agentId, team, Objects.requireNonNull(lifeline, "lifeline"));
    }

    public static HookTarget viaDaemon(HookRuntime runtime, String agentId, String team) {
        return new HookTarget(runtime, agentId, team, null);
    }

    public boolean viaDaemon() {
        return lifeline == null;
    }

    /** Direct: {@code <lifeline>/v1/teams/{team}/agents/{agentId}/hooks/{runtime}} (null via the daemon). */
    public String directUrl() {
        if (lifeline == null) {
            return null;
        }
        String base = lifeline.toString();
        while (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return base + "/v1/teams/" + team + "/agents/" + agentId + "/hooks/" + runtime.wire();
    }

    /** The daemon's path for this runtime's hooks, after {@code $LIFELINE_DAEMON}. */
    public String daemonPath() {
        return "/hooks/" + runtime.wire();
    }

    /**
     * The shell forwarder: posts the hook's JSON from stdin with curl, at most 2 s, and always exits 0 printing
     * nothing (a runtime that reads a hook's stdout as its answer, or blocks on a failing hook, sees neither). curl
     * reads {@code @-} whole before it connects, so the runtime's pipe is drained even when Lifeline is away.
     */
    public String curlFromStdin() {
        return curl() + " --data-binary @- " + destination() + " || true";
    }

    /**
     * {@link #curlFromStdin}, then, in direct mode, a watcher left behind: a POSIX sh loop (no JVM, no node) that
     * checks the runtime's process ({@code $PPID}: the runtime runs its hooks itself) once a second with
     * {@code kill -0} and, once it is gone, posts one {@value HookMapping#RUNTIME_EXITED} event and ends. After a clean
     * exit the session's end came first and Lifeline ignores it; after a kill -9 or a crash the agent is dead within
     * about a second, with no daemon. One watcher per runtime process: a lock directory named after the agent and the
     * pid (a second session start in the same process, Claude Code's {@code /clear}, leaves none). The watcher ignores
     * SIGHUP and SIGINT (a closed terminal, a Ctrl-C meant for the runtime) and holds none of the hook's pipes, so the
     * runtime never waits for it. Via the daemon there is none: the daemon watches the process itself.
     */
    public String sessionStartFromStdin() {
        if (viaDaemon()) {
            return curlFromStdin();
        }
        String lock = "\"${TMPDIR:-/tmp}/lifeline-watch." + agentId + ".$P\"";
        return curlFromStdin() + "; P=$PPID; if mkdir " + lock + " 2>/dev/null; then ( trap '' HUP INT; "
                + "while kill -0 \"$P\" 2>/dev/null; do sleep 1; done; printf '%s' '{\"hook_event_name\":\""
                + HookMapping.RUNTIME_EXITED + "\"}' | " + curl() + " --data-binary @- " + destination() + "; rmdir "
                + lock + " ) </dev/null >/dev/null 2>&1 & fi; exit 0";
    }

    /** As {@link #curlFromStdin} for a JSON given as the shell's {@code $1} (Codex's notify program). */
    public String curlFromFirstArgument() {
        return "printf '%s' \"$1\" | " + curl() + " --data-binary @- " + destination() + " || true";
    }

    private String curl() {
        return "curl -s -m 2 -o /dev/null -H 'Content-Type: application/json'"
                + (viaDaemon() ? "" : " -H \"Authorization: Bearer ${" + KEY_ENV + ":-$" + OLD_KEY_ENV + "}\"")
                + " -H '" + AGENT_HEADER + ": " + agentId + "'";
    }

    private String destination() {
        return viaDaemon() ? "\"$" + DAEMON_ENV + daemonPath() + "\"" : "'" + directUrl() + "'";
    }

    /**
     * Whether a runtime's hook entry is one of Lifeline's: its command or headers name {@value #AGENT_HEADER}, or
     * (Gemini CLI) its name is {@code lifeline}.
     */
    static boolean isLifelines(JsonNode handler) {
        if (handler == null || !handler.isObject()) {
            return false;
        }
        return handler.path("command").asText("").contains(AGENT_HEADER + ":")
                || "lifeline".equals(handler.path("name").asText(null))
                || handler.path("headers").has(AGENT_HEADER);
    }
}
