package io.lifeline.client.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.function.Consumer;

/**
 * The few routes of an opencode server ({@code opencode serve}) the bridge uses, as its OpenAPI document
 * ({@code GET /doc}) names them: {@code GET /event} (server-sent events), {@code GET /session},
 * {@code GET /session/status}, {@code POST /session}, {@code GET /session/{id}/message},
 * {@code POST /session/{id}/prompt_async}.
 */
public final class OpencodeApi {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http;
    private final String password;
    private volatile InputStream stream;
    /** Set by {@link #abort()}: no stream is read from then on (one being opened is closed at once). */
    private volatile boolean aborted;

    /** {@code password}: opencode's OPENCODE_SERVER_PASSWORD (HTTP basic, user "opencode"), or null. */
    public OpencodeApi(URI base, String password) {
        String u = base.toString();
        this.base = URI.create(u.endsWith("/") ? u.substring(0, u.length() - 1) : u);
        this.password = password;
        // HTTP/1.1: a POST offered an h2c upgrade gets no answer from opencode's server (1.18).
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    public URI base() {
        return base;
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path));
        if (password != null) {
            String token = Base64.getEncoder().encodeToString(("opencode:" + password)
                    .getBytes(StandardCharsets.UTF_8));
            b.header("Authorization", "Basic " + token);
        }
        return b;
    }

    private JsonNode send(HttpRequest r) throws IOException {
        try {
            HttpResponse<String> response = http.send(r, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 != 2) {
                throw new IOException("opencode answered HTTP " + response.statusCode() + " to " + r.method() + " "
                        + r.uri().getPath() + ": " + abbreviate(response.body()));
            }
            String body = response.body();
            return body == null || body.isBlank() ? JSON.nullNode() : JSON.readTree(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }

    /** Every session: objects with {@code id} and {@code title}. */
    public JsonNode sessions() throws IOException {
        return send(request("/session").timeout(Duration.ofSeconds(10)).GET().build());
    }

    /** Session id to status object ({@code {"type": "busy"|"idle"|"retry", ...}}) for sessions not idle. */
    public JsonNode statuses() throws IOException {
        return send(request("/session/status").timeout(Duration.ofSeconds(10)).GET().build());
    }

    /** Creates a session with {@code title}; answers its id. */
    public String createSession(String title) throws IOException {
        ObjectNode body = JSON.createObjectNode().put("title", title);
        JsonNode s = send(request("/session").timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build());
        return s.path("id").asText();
    }

    /** A session's messages, oldest first: objects with {@code info} and {@code parts}. */
    public JsonNode messages(String sessionId) throws IOException {
        return send(request("/session/" + sessionId + "/message").timeout(Duration.ofSeconds(10)).GET().build());
    }

    /** Sends a prompt without waiting for the model's answer. */
    public void promptAsync(String sessionId, String text) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.putArray("parts").addObject().put("type", "text").put("text", text);
        send(request("/session/" + sessionId + "/prompt_async").timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .build());
    }

    /**
     * Reads {@code GET /event} until the stream ends or fails, handing each {@code data:} line's JSON to
     * {@code onEvent}; returns normally when the server closes the stream, throws when it cannot connect.
     */
    public void events(Consumer<JsonNode> onEvent) throws IOException {
        if (aborted) {
            throw new IOException("closed");
        }
        HttpRequest r = request("/event").header("Accept", "text/event-stream").GET().build();
        HttpResponse<InputStream> response;
        try {
            response = http.send(r, HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (response.statusCode() != 200) {
            response.body().close();
            throw new IOException("opencode answered HTTP " + response.statusCode() + " to GET /event");
        }
        stream = response.body();
        if (aborted) {
            response.body().close(); // abort() ran while the stream was being opened
            throw new IOException("closed");
        }
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            StringBuilder data = new StringBuilder();
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith("data:")) {
                    data.append(line.substring(5).stripLeading());
                } else if (line.isEmpty() && data.length() > 0) {
                    dispatch(data.toString(), onEvent);
                    data.setLength(0);
                }
            }
            if (data.length() > 0) {
                dispatch(data.toString(), onEvent);
            }
        }
    }

    /**
     * Ends a running {@link #events} (from another thread): it returns or throws at once, and so does any later
     * call (even one whose connection was being opened meanwhile).
     */
    public void abort() {
        aborted = true;
        InputStream s = stream;
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing to stop reading: nothing more to do
            }
        }
    }

    private static void dispatch(String data, Consumer<JsonNode> onEvent) {
        JsonNode event;
        try {
            event = JSON.readTree(data);
        } catch (IOException e) {
            return; // not JSON: not an event the bridge knows
        }
        onEvent.accept(event);
    }
}
