package io.lifeline.revive;

/**
 * The store was throttled or out of reach during a revive step. The state machine retries Task states on
 * this error (by its class name, which is the error name a Java Lambda reports) with 2 s, 4 s, 8 s.
 */
public final class TransientReviveException extends RuntimeException {
    public TransientReviveException(String message, Throwable cause) {
        super(message, cause);
    }
}
