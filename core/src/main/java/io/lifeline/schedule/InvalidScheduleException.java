package io.lifeline.schedule;

/** A schedule expression or time zone that cannot be used; the message says why, for a person. */
public final class InvalidScheduleException extends IllegalArgumentException {
    public InvalidScheduleException(String message) {
        super(message);
    }
}
