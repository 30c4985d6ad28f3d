package io.lifeline.client.hooks;

import com.fasterxml.jackson.databind.JsonNode;
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

    /** As {@link #curlFromStdin} for a JSON given as the shell's {@code $1} (Codex's notify program). */
    public String curlFromFirstArgument() {
        return "printf '%s' \"$1\" | " + curl() + " --data-binary @- " + destination() + " || true";
    }

    private String curl() {
        return "curl -s -m 2 -o /dev/null -H 'Content-Type: application/json'"
                + (viaDaemon() ? "" : " -H \"Authorization: Bearer $" + KEY_ENV + "\"")
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
