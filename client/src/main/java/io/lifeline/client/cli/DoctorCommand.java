package io.lifeline.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineException;
import io.lifeline.client.hooks.HookTarget;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventList;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.hooks.HookRuntime;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * A deployment checked end to end with a canary agent: the key works, the canary joins and beats (through the
 * heartbeat URL when one is configured), it is listed, its status change reaches the events route (so the table's
 * stream, the outbox and the event log work), and the deployment's metric namespace receives the outbox's
 * {@code EventsPublished} (Lifeline Local: its own extraction at {@code GET /local/metrics}; AWS: CloudWatch, read
 * with the AWS CLI). The canary leaves at the end, so it is never judged silent, and is deleted, so it does not stay in
 * the team's list. Exit 0 when every check passed.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Check a deployment end to end with a canary agent (admin key): it joins and beats, is listed, "
                + "its event reaches the events route, and the metric namespace receives data; then it leaves and is deleted.",
                "With --agent ID: check that agent's hooks instead (lifeline hooks install, direct mode): a test hook "
                        + "is sent through the same URL, with the same headers and the key the hooks read "
                        + "(LIFELINE_API_KEY), and the agent is read with that key; nothing is written."})
final class DoctorCommand extends BaseCommand {
    /** The metric the outbox publishes for the canary's own status change. */
    static final String METRIC = "EventsPublished";
    static final String LOCAL_METRICS_PATH = "/local/metrics";
    /** The role the doctor registers its canary with; only an agent with it is deleted after the run. */
    static final String CANARY_ROLE = "canary";

    @Option(names = "--canary", description = "The canary's id (default lifeline-doctor); registered if missing.")
    String agentId = "lifeline-doctor";

    @Option(names = "--agent", paramLabel = "ID", description = "Check this agent's hooks instead of the deployment: "
            + "a test hook through the hooks' own path and key")
    String hooksOf;

    @Option(names = "--runtime", paramLabel = "RUNTIME", description = "With --agent: the runtime whose hook route is "
            + "tried (claude-code, codex, gemini, opencode; default claude-code)")
    String runtimeName = HookRuntime.CLAUDE_CODE.wire();

    @Option(names = "--timeout", description = "Seconds to wait for the event and the metric (default 120).")
    long timeoutSeconds = 120;

    @Option(names = "--namespace", description = "The deployment's metric namespace (default Lifeline).")
    String namespace = "Lifeline";

    private final List<String> failed = new ArrayList<>();

    @Override
    int run() throws LifelineException {
        if (hooksOf != null) {
            return hooks();
        }
        LifelineClient c = client();
        Instant since = Instant.now().minusSeconds(1);
        check("api", () -> {
            c.agents();
            return c.url() + " answers; the key reads team " + c.team();
        });
        check("canary", () -> {
            AgentView a;
            try {
                a = c.agent(agentId);
            } catch (LifelineApiException e) {
                if (!"AGENT_NOT_FOUND".equals(e.code())) {
                    throw e;
                }
                a = c.register(RegisterAgent.of(agentId, "lifeline doctor", CANARY_ROLE));
            }
            if (!"offline".equals(a.status())) {
                c.leave(agentId, "lifeline doctor: a fresh start"); // so the join below is a status change
            }
            return agentId + " joined: " + c.join(agentId).status();
        });
        check("heartbeat", () -> {
            HeartbeatResult r = c.heartbeat(agentId, Heartbeat.status("working"));
            return "accepted through " + c.heartbeatUrl() + ": " + r.agentStatus();
        });
        check("listed", () -> {
            AgentView listed = c.agents().agents().stream().filter(a -> a.agentId().equals(agentId)).findFirst()
                    .orElseThrow(() -> new IllegalStateException(agentId + " is not in the team's agents"));
            return agentId + " is " + listed.status() + " in the team's agents";
        });
        check("event", () -> {
            long started = System.nanoTime();
            EventView e = poll(() -> {
                EventList list = c.events(new EventQuery(since, null, agentId, "AgentStatusChanged", 10));
                return list.events().stream().filter(v -> "ready".equals(v.detail().path("to").asText()))
                        .findFirst().orElse(null);
            });
            if (e == null) {
                throw new IllegalStateException("no AgentStatusChanged of " + agentId + " on the events route within "
                        + timeoutSeconds + " s: is the publisher running (the table's stream, PublisherFunction)?");
            }
            return "AgentStatusChanged " + e.detail().path("from").asText() + " -> ready reached the events route in "
                    + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms";
        });
        check("metrics", () -> metrics(c.url()));
        check("leave", () -> leaveAndDelete(c));
        return verdict();
    }

    private int verdict() {
        if (failed.isEmpty()) {
            out().println("doctor: every check passed");
            out().flush();
            return 0;
        }
        out().println("doctor: " + failed.size() + " check(s) failed: " + String.join(", ", failed));
        out().flush();
        return LifelineCli.REFUSED;
    }

    /**
     * The canary leaves, then is deleted, so the team's list keeps no canary between runs (its history stays for its
     * retention, and the next run registers it again). Only an agent the doctor registered (role {@code canary}) is
     * deleted: an id given with {@code --canary} that names someone else's agent is left offline.
     */
    private String leaveAndDelete(LifelineClient c) {
        String left = agentId + " left: " + c.leave(agentId, "lifeline doctor: done").status();
        if (!CANARY_ROLE.equals(c.agent(agentId).role())) {
            return left + " (kept: its role is not " + CANARY_ROLE + ")";
        }
        c.deleteAgent(agentId);
        return left + ", then deleted";
    }

    /**
     * {@code --agent ID}: what that agent's direct-mode hooks meet. The key they read, a test event posted to the
     * URL they post to with their headers (an event no runtime sends: answered {@code 200 {}}, nothing written), and
     * the agent read with that key (a real event of an unregistered agent is refused 404).
     */
    private int hooks() {
        HookRuntime runtime = HookRuntime.fromWire(runtimeName).orElseThrow(() -> new ConfigFile.ConfigException(
                "unknown runtime '" + runtimeName + "' (known: claude-code, codex, gemini, opencode)"));
        String team = global.team(env());
        String base = GlobalOptions.first(global.heartbeatUrl(env()), global.url(env()));
        HookTarget target;
        try {
            target = HookTarget.direct(runtime, hooksOf, team, URI.create(base));
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.ConfigException(e.getMessage());
        }
        String key = HookChecks.hookKey(env(), runtime);
        check("key", () -> {
            if (key == null) {
                throw new IllegalStateException("$" + HookTarget.KEY_ENV + " is not set here: the hooks would send no "
                        + "key, and every one would be refused (401)");
            }
            return "$" + (GlobalOptions.first(env().get(HookTarget.KEY_ENV)) != null ? HookTarget.KEY_ENV
                    : HookTarget.OLD_KEY_ENV) + " is set";
        });
        check("hook", () -> {
            HookChecks.Answer a = HookChecks.testHook(target, key);
            String said = "POST " + target.directUrl() + " answered " + a.status() + " " + a.body().strip();
            if (a.status() == 200) {
                return said;
            }
            throw new IllegalStateException(a.status() == 0 ? "POST " + target.directUrl() + ": no answer ("
                    + a.failure() + ")" : said + (a.status() == 401 ? ": the key is refused"
                    : a.status() == 403 ? ": the key is not one of team " + team + "'s, or may not send beats" : ""));
        });
        check("agent", () -> {
            LifelineClient c = global.client(env(), sleeper(), team, key, null, true);
            try {
                return hooksOf + " is registered in team " + team + " (" + c.agent(hooksOf).status() + ")";
            } catch (LifelineApiException e) {
                if (e.status() == 404) {
                    throw new IllegalStateException(hooksOf + " is not registered in team " + team + ": its hooks' "
                            + "events are refused (404); register it (lifeline register " + hooksOf + ")");
                }
                throw e;
            }
        });
        return verdict();
    }

    /** One check's line: "ok   name: what it saw" or "FAIL name: why". */
    private void check(String name, Supplier<String> step) {
        try {
            out().println("ok   " + name + ": " + step.get());
        } catch (RuntimeException e) {
            failed.add(name);
            out().println("FAIL " + name + ": " + e.getMessage());
        }
        out().flush();
    }

    /**
     * Lifeline Local answers {@code GET /local/metrics} with what it extracted from the functions' lines; on AWS the
     * namespace is read from CloudWatch with the AWS CLI (credentials of the caller), where a new metric may take
     * some minutes to be listed.
     */
    private String metrics(URI base) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI local = URI.create(base + LOCAL_METRICS_PATH);
        JsonNode found = poll(() -> {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(local).timeout(Duration.ofSeconds(10))
                        .GET().build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    return MissingNode.getInstance();
                }
                JsonNode m = LifelineClient.mapper().readTree(r.body()).path("namespaces").path(namespace)
                        .path(METRIC);
                return m.isMissingNode() ? null : m;
            } catch (IOException e) {
                return MissingNode.getInstance();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return MissingNode.getInstance();
            }
        });
        if (found != null && !found.isMissingNode()) {
            return "namespace " + namespace + " has " + METRIC + " (" + found.path("samples").asLong()
                    + " samples; Lifeline Local's extraction of the functions' lines, GET " + LOCAL_METRICS_PATH + ")";
        }
        if (found != null) {
            return cloudWatch();
        }
        throw new IllegalStateException("Lifeline Local extracted no " + namespace + "/" + METRIC + " within "
                + timeoutSeconds + " s");
    }

    /** {@code aws cloudwatch list-metrics}: the namespace's metric, once CloudWatch lists it. */
    private String cloudWatch() {
        List<String> command = List.of("aws", "cloudwatch", "list-metrics", "--namespace", namespace, "--metric-name",
                METRIC, "--output", "json");
        String[] last = {""};
        JsonNode listed = poll(() -> {
            try {
                Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
                String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    last[0] = text.strip();
                    return null;
                }
                JsonNode metrics = LifelineClient.mapper().readTree(text).path("Metrics");
                return metrics.isEmpty() ? null : metrics;
            } catch (IOException e) {
                throw new IllegalStateException("not checked: this deployment is not Lifeline Local and the AWS CLI "
                        + "is not here (" + e.getMessage() + "); run: " + String.join(" ", command));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        });
        if (listed == null) {
            throw new IllegalStateException("CloudWatch lists no " + namespace + "/" + METRIC + " yet (a new metric "
                    + "can take up to 15 minutes to be listed; run again later)" + (last[0].isEmpty() ? ""
                    : ": " + last[0]));
        }
        return "namespace " + namespace + " has " + METRIC + " in CloudWatch (" + listed.size() + " dimension sets)";
    }

    /** Calls {@code probe} every 500 ms until it answers non-null or the timeout passes. */
    private <T> T poll(Supplier<T> probe) {
        long deadline = System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos();
        while (true) {
            T v = probe.get();
            if (v != null || System.nanoTime() > deadline) {
                return v;
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }
}
