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
     * Worth trying again later (README, "Throttled answers"): 429 (a throttled Function URL, or API Gateway's own
     * rate limit), 503 (Lifeline's THROTTLED, STORE_UNAVAILABLE, CONTENDED, REVIVE_UNAVAILABLE), and a 500 that
     * carries no Lifeline code: the HTTP API's own {@code {"message":"Internal Server Error"}}, its answer when
     * Lambda throttled the function (which then never ran). Lifeline's own 500 INTERNAL_ERROR is not retried.
     */
    public boolean isTransient() {
        return status == 429 || status == 503 || throttledByGateway();
    }

    /** The HTTP API's 500 with no Lifeline code: a throttled (or failed) invocation the function never answered. */
    public boolean throttledByGateway() {
        return status == 500 && code != null && code.startsWith("HTTP_");
    }
}
