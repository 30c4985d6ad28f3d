package io.lifeline.client.daemon;

import java.util.Locale;
import java.util.Optional;

/**
 * Whether the daemon starts an agent's command again after it ends, in systemd's words ({@code Restart=}). A command
 * that exits with status 0 finished: its agent leaves ({@code offline}) and that is no crash; any other end (a
 * non-zero status, a signal) is a crash, reported dead. The policy only decides what follows.
 */
public enum RestartPolicy {
    /** Never started again: a crash is reported and left to the revive flow (or a person). */
    NO,
    /** Started again after a crash (with the crash backoff and the give-up); a command that finished stays offline. */
    ON_FAILURE,
    /** Started again after a crash, and after it finished too (it leaves, then joins again), with the same backoff. */
    ALWAYS;

    /** The word on the command line: {@code no}, {@code on-failure}, {@code always}. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Optional<RestartPolicy> fromWire(String text) {
        for (RestartPolicy p : values()) {
            if (p.wire().equals(text)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Whether an end restarts the command: {@code finished} is an exit with status 0. */
    public boolean restarts(boolean finished) {
        return this == ALWAYS || this == ON_FAILURE && !finished;
    }
}
