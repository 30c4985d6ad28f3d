package io.lifeline.client.cli;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineConnectionException;
import io.lifeline.client.hooks.HookTarget;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.hooks.HookRuntime;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What a runtime's hooks need before they can report, checked where a person sees the answer: the agent is
 * registered (registered here when the CLI's key is an admin key, as {@code lifeline daemon} does), the key variable
 * the hooks read is set in this environment, and Lifeline accepts that key. A runtime swallows a hook's 401 or 404,
 * so a hook that cannot report is otherwise silent: the agent simply never appears.
 *
 * <p>{@code problems} are what makes the hooks fail for sure (the command exits non-zero); {@code notes} what was
 * checked, or could not be (Lifeline not answering is a note: it may be started later).
 */
final class HookChecks {
    /** The event a test hook sends: not a runtime's, so Lifeline answers it {@code 200 {}} and writes nothing. */
    static final String TEST_EVENT = "LifelineDoctor";

    final List<String> problems = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    private final Map<String, String> env;
    private final String team;
    private final Function<String, LifelineClient> clientWithKey;

    /** {@code clientWithKey}: a client to the API's URL for the team, with the given key (null: the CLI's own). */
    HookChecks(Map<String, String> env, String team, Function<String, LifelineClient> clientWithKey) {
        this.env = env;
        this.team = team;
        this.clientWithKey = clientWithKey;
    }

    /** The key the hooks will send: {@value HookTarget#KEY_ENV}, else the older {@value HookTarget#OLD_KEY_ENV}. */
    static String hookKey(Map<String, String> env, HookRuntime runtime) {
        String key = GlobalOptions.first(env.get(HookTarget.KEY_ENV));
        return key != null || runtime == HookRuntime.CLAUDE_CODE ? key : GlobalOptions.first(env.get(
                HookTarget.OLD_KEY_ENV));
    }

    /** Direct mode: the key variable is set here (so, most likely, in the runtime started from this shell). */
    void keyVariable(HookTarget t) {
        if (t.viaDaemon()) {
            return;
        }
        if (hookKey(env, t.runtime()) != null) {
            notes.add("ok: $" + (GlobalOptions.first(env.get(HookTarget.KEY_ENV)) != null ? HookTarget.KEY_ENV
                    : HookTarget.OLD_KEY_ENV) + " is set; the hooks read it from " + t.runtime().wire()
                    + "'s environment when they run");
            return;
        }
        if (t.runtime() == HookRuntime.CLAUDE_CODE && GlobalOptions.first(env.get(HookTarget.OLD_KEY_ENV)) != null) {
            problems.add("$" + HookTarget.KEY_ENV + " is not set, only the older $" + HookTarget.OLD_KEY_ENV
                    + ": Claude Code's HTTP hooks read " + HookTarget.KEY_ENV + " alone (a header can name one "
                    + "variable), so every hook would be refused (401). Run: export " + HookTarget.KEY_ENV + "=\"$"
                    + HookTarget.OLD_KEY_ENV + "\"");
            return;
        }
        problems.add("$" + HookTarget.KEY_ENV + " is not set: the hooks read the agent's key from it in "
                + t.runtime().wire() + "'s environment, so every hook would be refused (401). Export it (an agent "
                + "key: lifeline keys create --scope agent --label " + t.agentId() + ") in the shell that starts "
                + t.runtime().wire() + ", then run this again");
    }

    /**
     * The agent is registered in the team; if not, registered now when the CLI's key may (an admin key). Then, in
     * direct mode, the hooks' key reads it too (a key of another team, or revoked, is refused here as it would be
     * there).
     */
    void agent(HookTarget t) {
        AgentView agent;
        try {
            agent = registered(t.agentId(), t.viaDaemon());
        } catch (LifelineConnectionException e) {
            notes.add("not checked: " + e.getMessage() + "; once it runs, check with: lifeline doctor --agent "
                    + t.agentId() + " --runtime " + t.runtime().wire());
            return;
        } catch (LifelineApiException e) {
            problems.add(e.status() == 401 || e.status() == 403
                    ? "cannot check agent " + t.agentId() + ": Lifeline refused the CLI's key (" + e.code() + ": "
                    + e.getMessage() + ")"
                    : "agent " + t.agentId() + ": " + e.code() + " (HTTP " + e.status() + "): " + e.getMessage());
            return;
        }
        if (agent == null) {
            return;
        }
        String hookKey = hookKey(env, t.runtime());
        if (t.viaDaemon() || hookKey == null) {
            return;
        }
        try {
            clientWithKey.apply(hookKey).agent(t.agentId());
            notes.add("ok: Lifeline accepts the hooks' key for agent " + t.agentId());
        } catch (LifelineApiException e) {
            problems.add("Lifeline refuses the key in $" + HookTarget.KEY_ENV + " for agent " + t.agentId() + " ("
                    + e.code() + ", HTTP " + e.status() + ": " + e.getMessage() + "): every hook would be refused. "
                    + "Give the runtime a key of team " + team);
        } catch (LifelineConnectionException e) {
            notes.add("not checked: the hooks' key (" + e.getMessage() + ")");
        }
    }

    /**
     * The agent, or null after a problem (or, via the daemon, a note: {@code lifeline daemon} registers its agents
     * at start when its key may) was added; registers it when missing and the CLI's key may.
     */
    private AgentView registered(String agentId, boolean viaDaemon) {
        LifelineClient cli = clientWithKey.apply(null);
        try {
            AgentView a = cli.agent(agentId);
            notes.add("ok: agent " + agentId + " is registered in team " + team + " (" + a.status() + ")");
            return a;
        } catch (LifelineApiException e) {
            if (e.status() != 404) {
                throw e;
            }
        }
        try {
            AgentView a = cli.register(RegisterAgent.of(agentId, agentId, "worker"));
            notes.add("registered: agent " + agentId + " in team " + team + " (it was not registered; this key is an "
                    + "admin key)");
            return a;
        } catch (LifelineApiException r) {
            if ("AGENT_EXISTS".equals(r.code())) {
                return cli.agent(agentId);
            }
            if (r.status() != 401 && r.status() != 403) {
                throw r;
            }
        }
        if (viaDaemon) {
            notes.add("note: agent " + agentId + " is not registered in team " + team + ", and this key may not "
                    + "register it: lifeline daemon registers it at start if its key is an admin key");
            return null;
        }
        problems.add("agent " + agentId + " is not registered in team " + team + ", and this key may not register it: "
                + "every hook would be refused (404). Register it with an admin key (lifeline register " + agentId
                + "), or run this with one");
        return null;
    }

    /** One test hook's answer: its HTTP status and body, or why none came. */
    record Answer(int status, String body, String failure) {
    }

    /**
     * Posts a test event (not a runtime's: answered {@code 200 {}}, nothing written) to {@code t}'s direct URL with
     * the headers the installed hooks send and the key they read: what a real hook would meet, short of the agent's
     * existence, which a real event needs and {@link #agent} checks.
     */
    static Answer testHook(HookTarget t, String key) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(t.directUrl())).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header(HookTarget.AGENT_HEADER, t.agentId())
                .POST(HttpRequest.BodyPublishers.ofString("{\"hook_event_name\":\"" + TEST_EVENT + "\"}"));
        if (key != null) {
            req.header("Authorization", "Bearer " + key);
        }
        try {
            HttpResponse<String> r = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(r.statusCode(), r.body(), null);
        } catch (IOException e) {
            return new Answer(0, "", e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": "
                    + e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(0, "", "interrupted");
        }
    }
}
