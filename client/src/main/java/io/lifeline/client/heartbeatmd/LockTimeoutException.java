package io.lifeline.client.heartbeatmd;

/** Another wake held heartbeat.md's lock for longer than the caller would wait. The message says who and where. */
public final class LockTimeoutException extends RuntimeException {
    LockTimeoutException(String message) {
        super(message);
    }
}
