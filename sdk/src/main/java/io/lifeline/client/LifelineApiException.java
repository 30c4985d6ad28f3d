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

    /** 429 and 503: worth trying again later. */
    public boolean isTransient() {
        return status == 429 || status == 503;
    }
}
