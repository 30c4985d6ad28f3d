package io.lifeline.app;

/**
 * The revive flow's start, as the application layer asks for it: one execution of the revive state machine,
 * named so that asking twice for one state starts it once. Its adapter on AWS is Step Functions'
 * {@code StartExecution} ({@code io.lifeline.aws.StepFunctionsReviveStarts}); {@link ManualRevive} decides whether
 * and with what to start it.
 */
public interface ReviveStarts {
    /**
     * Starts the execution {@code name} with {@code input} (JSON); answers its ARN. Throws {@link AlreadyStarted}
     * when an execution of that name exists, {@link Unavailable} when the flow could not be reached.
     */
    String start(String name, String input);

    /** An execution of that name exists: this state's revive is under way, or was. */
    final class AlreadyStarted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public AlreadyStarted(Throwable cause) {
            super(cause);
        }
    }

    /** The flow could not be reached (the caller may retry). */
    final class Unavailable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Unavailable(Throwable cause) {
            super(cause);
        }
    }
}
