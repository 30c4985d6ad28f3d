package io.lifeline.client.heartbeatmd;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * {@code type: http_check}: a GET of {@code target} (a field, or a param). Any 2xx is success ({@code OK (200)});
 * anything else fails ({@code HTTP 503}), as does no answer within the timeout ({@code Connection timeout after 30s}).
 * Redirects are not followed. The client is built once, with the runner.
 */
public final class HttpCheckRunner implements ActionRunner {
    private final HttpClient client;

    public HttpCheckRunner() {
        this(HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build());
    }

    public HttpCheckRunner(HttpClient client) {
        this.client = client;
    }

    @Override
    public Outcome run(Action action, Path baseDir) {
        long start = System.nanoTime();
        String target = action.fieldOrParam("target");
        if (target == null || target.isBlank()) {
            return new Outcome(false, "http_check action has no target", Duration.ZERO);
        }
        Duration timeout = action.timeout();
        HttpRequest request;
        try {
            request = HttpRequest.newBuilder(URI.create(target.strip())).timeout(timeout).GET().build();
        } catch (IllegalArgumentException e) {
            return new Outcome(false, ActionRunner.oneLine("Invalid target '" + target + "': " + e.getMessage()),
                    Duration.ZERO);
        }
        try {
            HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
            int code = response.statusCode();
            boolean ok = code >= 200 && code < 300;
            return new Outcome(ok, ok ? "OK (" + code + ")" : "HTTP " + code, elapsed(start));
        } catch (HttpTimeoutException e) {
            return new Outcome(false, "Connection timeout after " + Durations.format(timeout), elapsed(start));
        } catch (ConnectException e) {
            return new Outcome(false, ActionRunner.oneLine("Connection failed: " + e), elapsed(start));
        } catch (IOException e) {
            return new Outcome(false, ActionRunner.oneLine("Request failed: " + e), elapsed(start));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Outcome(false, "Interrupted", elapsed(start));
        }
    }

    private static Duration elapsed(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }
}
