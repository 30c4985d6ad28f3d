package io.lifeline.local.aws.asl;

/** A path that selected nothing, or a value of the wrong shape, while running: the execution fails with States.Runtime. */
final class PathFailure extends RuntimeException {
    PathFailure(String message) {
        super(message, null, false, false);
    }
}
