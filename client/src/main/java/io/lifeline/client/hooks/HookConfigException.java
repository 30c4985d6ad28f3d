package io.lifeline.client.hooks;

/** A runtime's settings file that Lifeline cannot safely edit (not JSON, wrong shape, unreadable): nothing is written. */
public final class HookConfigException extends RuntimeException {
    public HookConfigException(String message) {
        super(message);
    }
}
