package io.lifeline.local.aws.asl;

import java.util.Objects;

/** A Task that failed the way a Lambda does: an error name for Retry/Catch to match, and a human-readable cause. */
public class TaskFailure extends Exception {
    private final String error;
    private final String cause;

    public TaskFailure(String error, String cause) {
        super(error + (cause == null ? "" : ": " + cause));
        this.error = Objects.requireNonNull(error, "error");
        this.cause = cause;
    }

    public String error() {
        return error;
    }

    /** The cause as reported, or null if there was none. */
    public String cause() {
        return cause;
    }
}
