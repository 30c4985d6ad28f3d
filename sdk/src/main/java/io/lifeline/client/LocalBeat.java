package io.lifeline.client;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A local beat to the host daemon that runs this agent (its {@code LIFELINE_DAEMON} channel): the agent proves it
 * is not hung, and the daemon's next batch carries that to Lifeline in one write for the whole host. Use it where
 * the agent would send a heartbeat, when {@link #fromEnvironment} finds a daemon.
 */
public final class LocalBeat {
    /** The environment variable the daemon sets for its children. */
    public static final String ENV = "LIFELINE_DAEMON";

    private final URI base;
    private final HttpClient http;

    private LocalBeat(URI base) {
        this.base = base;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    }

    /** The daemon named by {@value #ENV} in {@code env}, if any (a blank value is none). */
    public static Optional<LocalBeat> fromEnvironment(Map<String, String> env) {
        String url = env.get(ENV);
        if (url == null || url.isBlank()) {
            return Optional.empty();
        }
        String trimmed = url.strip();
        return Optional.of(new LocalBeat(URI.create(trimmed.endsWith("/") ? trimmed : trimmed + "/")));
    }

    public static Optional<LocalBeat> fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /** The daemon's URL. */
    public URI url() {
        return base;
    }

    /**
     * Sends one local beat for {@code agentId}. A daemon that does not run the agent refuses it
     * ({@link LifelineApiException}, 404); an unreachable one is a {@link LifelineConnectionException}.
     */
    public void beat(String agentId) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("v1/beat/"
                        + URLEncoder.encode(agentId, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new LifelineConnectionException("cannot reach the host daemon at " + base + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LifelineConnectionException("interrupted while beating to the host daemon", e);
        }
        if (response.statusCode() != 204) {
            throw new LifelineApiException(response.statusCode(), "AGENT_NOT_FOUND",
                    "the host daemon at " + base + " refused the local beat of " + agentId + ": "
                            + response.body(), null, false);
        }
    }
}
