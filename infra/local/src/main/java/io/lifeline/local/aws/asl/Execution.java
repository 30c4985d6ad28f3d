package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One run of a machine. The runner changes it under its lock; the public getters may be read from any thread
 * (volatile fields, status written last, history copied under its own monitor).
 */
public final class Execution {
    public enum Status { RUNNING, SUCCEEDED, FAILED }

    /** What the runner does when it next drives this execution. */
    enum Resume { ENTER_STATE, RETRY_TASK, END_WAIT }

    private final String name;
    private final JsonNode input;
    private final Instant startedAt;
    private final List<HistoryEvent> history = new ArrayList<>();
    private volatile Status status = Status.RUNNING;
    private volatile JsonNode output;
    private volatile String error;
    private volatile String cause;
    private volatile Instant stoppedAt;
    private volatile Instant waitingUntil;

    // Where the execution is; used only by AslRunner, under its lock.
    String stateName;
    JsonNode stateInput;
    Instant enteredAt;
    int[] retriesByRetrier;
    int retryCount;
    Resume resume;
    JsonNode waitOutput;

    Execution(String name, JsonNode input, Instant startedAt) {
        this.name = name;
        this.input = input;
        this.startedAt = startedAt;
    }

    public String name() {
        return name;
    }

    public Status status() {
        return status;
    }

    public JsonNode input() {
        return input.deepCopy();
    }

    /** The output of a SUCCEEDED execution, else null. */
    public JsonNode output() {
        JsonNode o = output;
        return o == null ? null : o.deepCopy();
    }

    /** The error name of a FAILED execution, else null. */
    public String error() {
        return error;
    }

    public String cause() {
        return cause;
    }

    public Instant startedAt() {
        return startedAt;
    }

    public Instant stoppedAt() {
        return stoppedAt;
    }

    public List<HistoryEvent> history() {
        synchronized (history) {
            return List.copyOf(history);
        }
    }

    /** When a parked execution (Wait or retry) is due to resume; empty while it runs or once it has ended. */
    public Optional<Instant> waitingUntil() {
        return Optional.ofNullable(waitingUntil);
    }

    @Override
    public String toString() {
        return "Execution[" + name + ", " + status + (error == null ? "" : ", " + error) + "]";
    }

    int historySize() {
        synchronized (history) {
            return history.size();
        }
    }

    void record(Instant at, String type, String state, JsonNode detail) {
        synchronized (history) {
            history.add(new HistoryEvent(at, type, state, detail));
        }
    }

    Instant waitingUntilOrNull() {
        return waitingUntil;
    }

    void park(Instant until) {
        waitingUntil = until;
    }

    void succeed(JsonNode output, Instant at) {
        this.output = output;
        end(Status.SUCCEEDED, at);
    }

    void fail(String error, String cause, Instant at) {
        this.error = error;
        this.cause = cause;
        end(Status.FAILED, at);
    }

    private void end(Status status, Instant at) {
        waitingUntil = null;
        stoppedAt = at;
        this.status = status;
    }
}
