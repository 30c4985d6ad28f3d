package io.lifeline.client;

/** Anything the SDK could not do: the server refused ({@link LifelineApiException}) or could not be reached. */
public class LifelineException extends RuntimeException {
    public LifelineException(String message) {
        super(message);
    }

    public LifelineException(String message, Throwable cause) {
        super(message, cause);
    }
}
