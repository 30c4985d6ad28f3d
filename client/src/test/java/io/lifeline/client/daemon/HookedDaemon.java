package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.client.LifelineClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The stand-in daemon the hook tests run: one agent whose command is a stand-in process (by default
 * {@code exec sleep 300}), its hooks' loopback channel judging it by its process ({@link LocalBeats}), and a
 * {@link HostDaemon} beating it through that channel, told of its exits. Hooks are posted to the channel as a runtime
 * posts them ({@link #post}, {@link #hook}); nothing is started until the test says so, and closing it stops the
 * daemon, the process and the channel, in that order.
 */
final class HookedDaemon implements AutoCloseable {
    /** The session id the posted Claude Code hooks name. */
    static final String SESSION = "3f1c0d52-7a7e-4c43-9a55-0c6a3b1f0e11";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    final String agent;
    final LocalBeats channel;
    final CommandProcesses processes;
    final HostDaemon daemon;

    /**
     * {@code agent} on {@code hostId} through {@code client}, beaten every {@code interval}, its command {@code command}
     * (its log in {@code dir}); {@code wiring} sees the processes before anything starts (a restart command, say).
     */
    HookedDaemon(LifelineClient client, String hostId, String agent, String command, Duration interval, Path dir,
                 Consumer<HookedDaemon> wiring) throws Exception {
        this.agent = agent;
        this.channel = LocalBeats.start(List.of(agent), Clock.systemUTC()).beatsFromProcesses(true);
        this.processes = new CommandProcesses(Map.of(agent, command), Map.of(), dir);
        this.daemon = HostDaemon.builder(client, hostId, processes).agents(List.of(agent)).localBeats(channel)
                .interval(interval).build();
        processes.onExit(daemon::processExited);
        wiring.accept(this);
    }

    /** As above, with {@code exec sleep 300} for a command and nothing more to wire. */
    HookedDaemon(LifelineClient client, String hostId, String agent, Duration interval, Path dir) throws Exception {
        this(client, hostId, agent, "exec sleep 300", interval, dir, h -> { });
    }

    /** Starts the agent's process (the daemon is started, or run round by round, by the test). */
    HookedDaemon startProcess() throws IOException {
        processes.startAll();
        return this;
    }

    /** A Claude Code hook's body for {@code event}, with {@code extra} fields (each with its leading comma). */
    static String claude(String event, String extra) {
        return "{\"session_id\":\"" + SESSION + "\",\"transcript_path\":\"/secret/path.jsonl\","
                + "\"cwd\":\"/w\",\"hook_event_name\":\"" + event + "\"" + extra + "}";
    }

    /** Posts Claude Code's {@code event} for this agent to the channel, answered 200. */
    void hook(String event, String extra) throws Exception {
        assertEquals(200, post(channel, "claude-code", agent, claude(event, extra)).statusCode());
    }

    /** Posts {@code body} to {@code channel}'s hook route of {@code runtime}, naming {@code agent} unless null. */
    static HttpResponse<String> post(LocalBeats channel, String runtime, String agent, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(channel.url() + "/hooks/" + runtime))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
        if (agent != null) {
            b.header(LocalBeats.AGENT_HEADER, agent);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        try {
            daemon.close();
        } finally {
            try {
                processes.close();
            } finally {
                channel.close();
            }
        }
    }
}
