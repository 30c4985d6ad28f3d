package io.lifeline.local.app;

import java.io.IOException;

/**
 * Lifeline Local will not start (or a bootstrap command will not run) for a reason the user can fix; the
 * message is the whole answer, one line, printed without a stack trace.
 */
public final class StartRefusedException extends IOException {
    StartRefusedException(String message) {
        super(message);
    }
}
