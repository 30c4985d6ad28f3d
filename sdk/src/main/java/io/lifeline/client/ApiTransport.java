package io.lifeline.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.function.Consumer;

/**
 * The SDK's HTTP core, under {@link LifelineClient}'s routes: one request as JSON with the team's key, and its
 * retries under the {@link RetryPolicy} while it fails transiently (with the line {@code onRetry} is told before each
 * wait); an answer read as the route's type, a refusal as a {@link LifelineApiException}, nobody at the URL as a
 * {@link LifelineConnectionException}.
 */
final class ApiTransport {
    static final ObjectMapper MAPPER = new ObjectMapper().registerModule(new JavaTimeModule())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .setSerializationInclusion(JsonInclude.Include.NON_NULL);

    /** The API's URL: where the retry notice says it cannot reach (heartbeats may go elsewhere). */
    private final URI baseUrl;
    private final String apiKey;
    private final HttpClient http;
    private final RetryPolicy retry;
    private final Sleeper sleeper;
    private final Duration requestTimeout;
    private final Consumer<String> onRetry;
    private final boolean readsFailFast;

    ApiTransport(URI baseUrl, String apiKey, Duration connectTimeout, Duration requestTimeout, RetryPolicy retry,
                 Sleeper sleeper, Consumer<String> onRetry, boolean readsFailFast) {
        this.baseUrl = baseUrl;
        this.apiKey = apiKey;
        this.retry = retry;
        this.sleeper = sleeper;
        this.requestTimeout = requestTimeout;
        this.onRetry = onRetry;
        this.readsFailFast = readsFailFast;
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).build();
    }

    /**
     * One request, retried under the policy ({@link RetryPolicy#retriesFor}) while it fails transiently. A request
     * that is not {@code repeatable} (it creates a team or a key, and a second one would make a second) is not sent
     * again after a 502 or 504, which may come after it ran ({@link LifelineApiException#mayHaveRun}); a throttle
     * (429, 503, the HTTP API's 500) says it did not run, and is retried as any other.
     */
    <T> T call(URI base, String method, String path, Object body, Class<T> type, boolean repeatable) {
        HttpRequest request = request(base, method, path, body);
        for (int attempt = 0;; attempt++) {
            Duration retryAfter = null;
            RuntimeException failure;
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                int status = response.statusCode();
                if (status / 100 == 2) {
                    return parse(response.body(), type);
                }
                LifelineApiException e = apiError(status, response.body());
                if (!e.isTransient()) {
                    throw e;
                }
                if (e.mayHaveRun() && !repeatable) {
                    throw new LifelineApiException(status, e.code(), "Lifeline's function did not answer (" + status
                            + "), and " + method + " " + path + " may have run: not sent again, since a repeat would "
                            + "create a second team or key; look first (lifeline keys list)", null, false);
                }
                failure = e;
                retryAfter = response.headers().firstValue("Retry-After").map(ApiTransport::seconds).orElse(null);
            } catch (IOException e) {
                if (readsFailFast && "GET".equals(method) && e instanceof ConnectException) {
                    // Nobody listens there: a read is not worth 14 s of retries to a person at a terminal.
                    throw new LifelineConnectionException("Cannot reach Lifeline at " + base + " (" + describe(e)
                            + "); " + (loopback(base) ? "is Lifeline Local running? Start it with: java -jar "
                            + "infra/local/target/lifeline-local.jar" : "is the URL right?"), e);
                }
                failure = new LifelineConnectionException("Cannot reach Lifeline at " + base + " (" + describe(e)
                        + ")", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LifelineConnectionException("Interrupted while calling " + method + " " + path, e);
            }
            int retries = retry.retriesFor(failure);
            if (attempt >= retries) {
                throw failure;
            }
            Duration wait = retry.delay(attempt, retryAfter);
            if (onRetry != null) {
                onRetry.accept(retryNotice(failure, wait, attempt, retries));
            }
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw failure;
            }
        }
    }

    /** The request as sent: JSON, with the key, and the body's SHA-256 when there is a body. */
    private HttpRequest request(URI base, String method, String path, Object body) {
        String json;
        try {
            json = body == null ? null : MAPPER.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Cannot write the request body", e);
        }
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(base + path)).timeout(requestTimeout)
                .header("Accept", "application/json");
        if (apiKey != null) {
            rb.header("Authorization", "Bearer " + apiKey);
        }
        if (json != null) {
            rb.header("Content-Type", "application/json");
            // The body's SHA-256: what Lambda needs of a POST that CloudFront signs for a Function URL behind an
            // origin access control (README, "The heartbeat URL on the internet"); ignored everywhere else.
            rb.header("x-amz-content-sha256", sha256Hex(json));
        }
        rb.method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
        return rb.build();
    }

    /**
     * "cannot reach http://127.0.0.1:8787 (Connection refused), retrying in 2 s (attempt 2 of 4; is Lifeline Local
     * running?)", or for a busy server "Lifeline is busy (503 THROTTLED), retrying in 2 s (attempt 2 of 4)".
     */
    private String retryNotice(RuntimeException failure, Duration wait, int attempt, int retries) {
        String in = "retrying in " + (wait.toMillis() < 1000 ? wait.toMillis() + " ms" : Math.round(wait.toMillis()
                / 1000.0) + " s") + " (attempt " + (attempt + 2) + " of " + (retries + 1);
        if (failure instanceof LifelineApiException api) {
            return (api.mayHaveRun() ? "Lifeline's function did not answer (" : "Lifeline is busy (") + api.status()
                    + " " + api.code() + "), " + in + ")";
        }
        String why = failure.getCause() instanceof IOException io ? " (" + describe(io) + ")" : "";
        return "cannot reach " + baseUrl + why + ", " + in + (loopback(baseUrl) ? "; is Lifeline Local running?)"
                : "; is the URL right?)");
    }

    private static boolean loopback(URI url) {
        String host = url.getHost() == null ? "" : url.getHost();
        return host.equals("127.0.0.1") || host.equals("localhost") || host.equals("[::1]");
    }

    /** "connection refused", "timed out", "unknown host", or the exception's own message. */
    static String describe(IOException e) {
        // An unresolvable host reaches us as a ConnectException too, with the cause that says so.
        if (e instanceof UnknownHostException || e.getCause() instanceof UnresolvedAddressException) {
            return "unknown host";
        }
        if (e instanceof ConnectException) {
            return "connection refused";
        }
        if (e instanceof HttpTimeoutException) {
            return "timed out";
        }
        return e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : e.getMessage();
    }

    static String sha256Hex(String body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(body.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present in the JDK", e);
        }
    }

    private static Duration seconds(String header) {
        try {
            return Duration.ofSeconds(Long.parseLong(header.trim()));
        } catch (NumberFormatException e) {
            return null; // an HTTP-date Retry-After: fall back to the backoff
        }
    }

    private static <T> T parse(String body, Class<T> type) {
        try {
            return MAPPER.readValue(body == null || body.isBlank() ? "{}" : body, type);
        } catch (JsonProcessingException e) {
            throw new LifelineException("Lifeline answered something that is not the expected JSON: " + e, e);
        }
    }

    private static LifelineApiException apiError(int status, String body) {
        String code = "HTTP_" + status;
        String message = null;
        String agentStatus = null;
        boolean rejoin = false;
        try {
            JsonNode n = MAPPER.readTree(body == null || body.isBlank() ? "{}" : body);
            if (n.hasNonNull("code")) {
                code = n.get("code").asText();
            }
            if (n.hasNonNull("error")) {
                message = n.get("error").asText();
            } else if (n.hasNonNull("message")) {
                message = n.get("message").asText(); // the gateway's own 401
            }
            if (n.hasNonNull("agentStatus")) {
                agentStatus = n.get("agentStatus").asText();
            }
            rejoin = n.path("rejoinRequired").asBoolean(false);
        } catch (JsonProcessingException e) {
            message = body;
        }
        return new LifelineApiException(status, code, message, agentStatus, rejoin);
    }
}
