package io.lifeline.local.aws.asl;

/** A state machine definition outside the supported subset, or not valid ASL; the message names the state and field. */
public final class AslException extends RuntimeException {
    public AslException(String message) {
        super(message);
    }
}
