package io.lifeline.client;

/**
 * The server refused a request: its HTTP {@code status}, machine {@code code} (e.g. REJOIN_REQUIRED,
 * AGENT_NOT_FOUND) and message; {@code agentStatus} and {@code rejoinRequired} where the server says them.
 */
public class LifelineApiException extends LifelineException {
    private final int status;
    private final String code;
    private final String agentStatus;
    private final boolean rejoinRequired;

    public LifelineApiException(int status, String code, String message, String agentStatus,
            boolean rejoinRequired) {
        super(message == null ? "HTTP " + status + " " + code : message + " (" + status + " " + code + ")");
        this.status = status;
        this.code = code;
        this.agentStatus = agentStatus;
        this.rejoinRequired = rejoinRequired;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public String agentStatus() {
        return agentStatus;
    }

    public boolean rejoinRequired() {
        return rejoinRequired;
    }

    /**
     * Worth trying again later (docs/api.md, "Throttled answers"): 429 (a throttled Function URL, or API Gateway's
     * own rate limit), 503 (Lifeline's THROTTLED, STORE_UNAVAILABLE, CONTENDED, REVIVE_UNAVAILABLE), and an answer
     * that says the function did not answer ({@link #functionDidNotAnswer}: 502, 504, or the HTTP API's 500 with no
     * Lifeline code). Lifeline's own 500 INTERNAL_ERROR is not retried.
     */
    public boolean isTransient() {
        return status == 429 || status == 503 || functionDidNotAnswer();
    }

    /**
     * The gateway got no answer from the function: a 502 (a Function URL's answer when the invocation failed, as a
     * SnapStart version that went inactive after 14 idle days fails until Lambda has made it ready again), a 504
     * (the gateway gave up waiting), or the HTTP API's 500 with no Lifeline code ({@link #throttledByGateway}).
     * Retried for longer than a throttle ({@link RetryPolicy#notReadyRetries}).
     */
    public boolean functionDidNotAnswer() {
        return status == 502 || status == 504 || throttledByGateway();
    }

    /**
     * A 502 or 504: unlike a throttle, the request may have run before the answer was lost, so only a request whose
     * repeat is harmless is sent again (every one but those that create a team or a key: a repeat would make a
     * second one).
     */
    public boolean mayHaveRun() {
        return status == 502 || status == 504;
    }

    /** The HTTP API's 500 with no Lifeline code: a throttled (or failed) invocation the function never answered. */
    public boolean throttledByGateway() {
        return status == 500 && code != null && code.startsWith("HTTP_");
    }
}
