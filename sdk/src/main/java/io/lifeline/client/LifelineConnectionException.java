package io.lifeline.client;

/** The server could not be reached (after the retries). */
public class LifelineConnectionException extends LifelineException {
    public LifelineConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
