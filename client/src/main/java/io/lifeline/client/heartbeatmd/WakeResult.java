package io.lifeline.client.heartbeatmd;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;

/**
 * What one wake did.
 *
 * @param ran                         every attempt made, in execution order
 * @param heldBack                    due actions not run: BLOCKED (dependency, or a CRITICAL failure earlier in
 *                                    the wake) or SKIPPED (condition), with the reason
 * @param nextWake                    the earliest time an action is next due, as written to the file; null when
 *                                    nothing is expected
 * @param nextHeartbeatWithinSeconds  whole seconds (rounded up, at least 1) from the end of the wake to nextWake;
 *                                    empty when nextWake is null
 * @param backup                      the copy made in {@code history/} before the wake
 * @param recovery                    when the file was corrupt and restored from a backup, a sentence saying so;
 *                                    otherwise null
 * @param staleLockBroken             when a stale lock was broken to run, what it said; otherwise null
 * @param heartbeatError              when the heartbeat callback threw, its message (the file is written anyway)
 * @param notRun                      every other action that did not run (not due), with why and when it next is
 */
public record WakeResult(Instant wokeAt, List<Attempt> ran, List<HeldBack> heldBack, Instant nextWake,
        OptionalLong nextHeartbeatWithinSeconds, Path backup, String recovery, String staleLockBroken,
        String heartbeatError, List<NotRun> notRun) {

    /** An action that was not due in this wake: why, and when it next is ({@code nextDue} null: nothing expected). */
    public record NotRun(String actionId, String reason, Instant nextDue) {
    }

    /** One attempt: the result on success or the error on failure, and the attempt number out of the maximum. */
    public record Attempt(String actionId, Priority priority, boolean success, String message, int attempt,
            int maxAttempts) {
    }

    public record HeldBack(String actionId, Evaluator.Verdict verdict, String reason) {
    }

    public List<Attempt> failed() {
        return ran.stream().filter(a -> !a.success()).toList();
    }

    public List<Attempt> succeeded() {
        return ran.stream().filter(Attempt::success).toList();
    }
}
