package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.local.aws.asl.AslMachine.Catcher;
import io.lifeline.local.aws.asl.AslMachine.Choice;
import io.lifeline.local.aws.asl.AslMachine.Fail;
import io.lifeline.local.aws.asl.AslMachine.Pass;
import io.lifeline.local.aws.asl.AslMachine.Retrier;
import io.lifeline.local.aws.asl.AslMachine.State;
import io.lifeline.local.aws.asl.AslMachine.Succeed;
import io.lifeline.local.aws.asl.AslMachine.Task;
import io.lifeline.local.aws.asl.AslMachine.Wait;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs executions of one machine. Nothing runs on its own thread: {@link #start} runs an execution until it ends or
 * parks (a Wait, or a retry's delay), and {@link #runDue} resumes parked executions whose time has come, so a
 * scheduler (or a test with a mutable clock) decides when time passes. Tasks run on the calling thread under one
 * lock: one execution step at a time.
 */
public final class AslRunner {
    /** Step Functions' cap on an execution's history; here it also stops a loop without waits holding the lock forever. */
    static final int MAX_HISTORY_EVENTS = 25_000;
    static final String RUNTIME = "States.Runtime";
    /** ARN-shaped, so a handler that parses $$.Execution.Id as an ARN works in Local too. */
    private static final String ID_PREFIX = "arn:aws:states:local:000000000000:execution:local:";
    private static final DateTimeFormatter CONTEXT_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final AslMachine machine;
    private final TaskInvoker tasks;
    private final Clock clock;
    private final double timeScale;
    private final ReentrantLock lock = new ReentrantLock();
    // Readers (execution, executions, nextWakeUp) need no lock, so a status query never waits behind a running task.
    private final Map<String, Execution> byName = new ConcurrentHashMap<>();
    private final List<Execution> inStartOrder = new CopyOnWriteArrayList<>();

    /** timeScale multiplies every wait and retry interval (1.0 = real rate; 0.01 = 100x faster; 0 = no waiting). */
    public AslRunner(AslMachine machine, TaskInvoker tasks, Clock clock, double timeScale) {
        this.machine = Objects.requireNonNull(machine, "machine");
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (!(timeScale >= 0) || Double.isInfinite(timeScale)) {
            throw new IllegalArgumentException("timeScale must be a finite number >= 0, not " + timeScale);
        }
        this.timeScale = timeScale;
    }

    /** Starts an execution and runs it until it ends or must wait; names are unique (a duplicate name throws). */
    public Execution start(String name, JsonNode input) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("an execution needs a name");
        }
        lock.lock();
        try {
            if (byName.containsKey(name)) {
                throw new ExecutionAlreadyExistsException(name);
            }
            Instant now = clock.instant();
            JsonNode in = input == null ? JsonNodeFactory.instance.objectNode() : input.deepCopy();
            Execution e = new Execution(name, in, now);
            byName.put(name, e);
            inStartOrder.add(e);
            e.record(now, "ExecutionStarted", null, detail("input", in));
            enter(e, machine.startAt(), in);
            drive(e);
            return e;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Resumes every execution whose wait has come due by clock.instant(); returns how many steps it ran (a step is
     * entering a state, a retried task attempt, or the end of a Wait).
     */
    public int runDue() {
        lock.lock();
        try {
            Instant now = clock.instant();
            List<Execution> due = inStartOrder.stream()
                    .filter(e -> e.waitingUntilOrNull() != null && !e.waitingUntilOrNull().isAfter(now))
                    .sorted(Comparator.comparing(Execution::waitingUntilOrNull))
                    .toList();
            int steps = 0;
            for (Execution e : due) {
                e.park(null);
                steps += drive(e);
            }
            return steps;
        } finally {
            lock.unlock();
        }
    }

    public Optional<Execution> execution(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every execution, in the order started. */
    public List<Execution> executions() {
        return List.copyOf(inStartOrder);
    }

    /** Earliest instant an execution is waiting for, if any (for schedulers and tests). */
    public Optional<Instant> nextWakeUp() {
        return inStartOrder.stream().map(Execution::waitingUntilOrNull).filter(Objects::nonNull)
                .min(Comparator.naturalOrder());
    }

    /** Runs steps until the execution ends or parks; returns the number of steps. */
    private int drive(Execution e) {
        int steps = 0;
        while (e.status() == Execution.Status.RUNNING && e.waitingUntilOrNull() == null) {
            if (e.historySize() >= MAX_HISTORY_EVENTS) {
                fail(e, RUNTIME, "the execution history reached " + MAX_HISTORY_EVENTS + " events");
                break;
            }
            steps++;
            try {
                step(e);
            } catch (PathFailure f) {
                fail(e, RUNTIME, f.getMessage());
            } catch (RuntimeException bug) {
                // Never let one execution kill the scheduler thread that called runDue().
                fail(e, RUNTIME, "interpreter error: " + bug);
            }
        }
        return steps;
    }

    private void step(Execution e) {
        State state = machine.state(e.stateName);
        switch (e.resume) {
            case RETRY_TASK -> attempt(e, (Task) state);
            case END_WAIT -> exit(e, e.waitOutput, ((Wait) state).next());
            case ENTER_STATE -> run(e, state);
        }
    }

    private void enter(Execution e, String stateName, JsonNode input) {
        e.stateName = stateName;
        e.stateInput = input;
        e.enteredAt = clock.instant();
        e.retriesByRetrier = null;
        e.retryCount = 0;
        e.resume = Execution.Resume.ENTER_STATE;
        e.waitOutput = null;
    }

    private void run(Execution e, State state) {
        e.record(e.enteredAt, "StateEntered", state.name(), detail("input", e.stateInput));
        if (state instanceof Task t) {
            // Retriers count attempts per visit to the state, so a later visit starts afresh.
            e.retriesByRetrier = new int[t.retry().size()];
            attempt(e, t);
        } else if (state instanceof Pass p) {
            JsonNode effective = inputOf(p.inputPath(), e);
            JsonNode result = p.result() != null ? p.result().deepCopy()
                    : p.parameters() != null ? Template.apply(p.parameters(), effective, context(e)) : effective;
            exit(e, outputOf(p.outputPath(), withResult(p.resultPath(), e.stateInput, result), e), p.next());
        } else if (state instanceof Wait w) {
            startWait(e, w);
        } else if (state instanceof Choice c) {
            choose(e, c);
        } else if (state instanceof Succeed s) {
            exit(e, outputOf(s.outputPath(), inputOf(s.inputPath(), e), e), null);
        } else if (state instanceof Fail f) {
            fail(e, f.error(), f.cause());
        }
    }

    /** InputPath -> Parameters -> task -> ResultSelector -> ResultPath -> OutputPath, as in the spec. */
    private void attempt(Execution e, Task t) {
        JsonNode effective = inputOf(t.inputPath(), e);
        if (t.parameters() != null) {
            effective = Template.apply(t.parameters(), effective, context(e));
        }
        ObjectNode scheduled = detail("resource", JsonNodeFactory.instance.textNode(t.resource()));
        scheduled.set("input", effective);
        e.record(clock.instant(), "TaskScheduled", t.name(), scheduled);
        JsonNode result;
        try {
            JsonNode r = tasks.invoke(t.resource(), effective.deepCopy());
            result = r == null ? NullNode.getInstance() : r.deepCopy();
        } catch (TaskFailure f) {
            taskFailed(e, t, f.error(), f.cause());
            return;
        } catch (VirtualMachineError fatal) {
            throw fatal;
        } catch (Throwable x) {
            if (x instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // What a Java Lambda reports as errorType: the exception's class name.
            taskFailed(e, t, x.getClass().getName(), x.getMessage());
            return;
        }
        e.record(clock.instant(), "TaskSucceeded", t.name(), detail("output", result));
        if (t.resultSelector() != null) {
            result = Template.apply(t.resultSelector(), result, context(e));
        }
        exit(e, outputOf(t.outputPath(), withResult(t.resultPath(), e.stateInput, result), e), t.next());
    }

    private void taskFailed(Execution e, Task t, String error, String cause) {
        Instant now = clock.instant();
        e.record(now, "TaskFailed", t.name(), errorDetail(error, cause));
        for (int i = 0; i < t.retry().size(); i++) {
            Retrier r = t.retry().get(i);
            if (!r.matches(error)) {
                continue;
            }
            if (e.retriesByRetrier[i] < r.maxAttempts()) {
                int attempt = ++e.retriesByRetrier[i];
                e.retryCount++;
                double delay = r.delaySeconds(attempt);
                Instant until = now.plus(scaled(delay));
                ObjectNode d = errorDetail(error, cause);
                d.put("attempt", attempt);
                d.put("delaySeconds", delay);
                d.put("until", until.toString());
                e.record(now, "RetryScheduled", t.name(), d);
                e.resume = Execution.Resume.RETRY_TASK;
                parkUntil(e, until);
                return;
            }
            break; // the first retrier that matches decides; once it is spent, Catch takes over
        }
        for (Catcher c : t.catchers()) {
            if (c.matches(error)) {
                ObjectNode taken = errorDetail(error, cause);
                taken.put("next", c.next());
                e.record(now, "CatchTaken", t.name(), taken);
                ObjectNode errorOutput = JsonNodeFactory.instance.objectNode().put("Error", error);
                if (cause != null) {
                    errorOutput.put("Cause", cause);
                }
                exit(e, withResult(c.resultPath(), e.stateInput, errorOutput), c.next());
                return;
            }
        }
        fail(e, error, cause);
    }

    private void startWait(Execution e, Wait w) {
        JsonNode effective = inputOf(w.inputPath(), e);
        Instant now = clock.instant();
        Instant until;
        if (w.seconds() != null) {
            until = now.plus(scaled(w.seconds()));
        } else if (w.secondsPath() != null) {
            JsonNode s = select(w.secondsPath(), effective, e, "SecondsPath");
            if (!s.isIntegralNumber() || s.asLong() < 0) {
                throw new PathFailure("SecondsPath '" + w.secondsPath() + "' of state '" + w.name()
                        + "' must select a non-negative integer, not " + s);
            }
            until = now.plus(scaled(s.asLong()));
        } else {
            Instant at = w.timestamp();
            if (at == null) {
                JsonNode ts = select(w.timestampPath(), effective, e, "TimestampPath");
                at = ts.isTextual() ? AslMachine.parseTimestamp(ts.asText()) : null;
                if (at == null) {
                    throw new PathFailure("TimestampPath '" + w.timestampPath() + "' of state '" + w.name()
                            + "' must select an RFC 3339 timestamp, not " + ts);
                }
            }
            // The time still to go is scaled like any other wait; a timestamp already past continues at once.
            Duration left = Duration.between(now, at);
            until = left.isNegative() ? now : now.plus(scaled(left.getSeconds() + left.getNano() / 1e9));
        }
        e.waitOutput = outputOf(w.outputPath(), effective, e);
        e.record(now, "WaitStarted", w.name(), detail("until", JsonNodeFactory.instance.textNode(until.toString())));
        e.resume = Execution.Resume.END_WAIT;
        parkUntil(e, until);
    }

    private void choose(Execution e, Choice c) {
        JsonNode effective = inputOf(c.inputPath(), e);
        JsonNode context = context(e);
        String next = c.choices().stream().filter(b -> b.rule().test(effective, context))
                .map(ChoiceRule.Branch::next).findFirst().orElse(c.defaultNext());
        if (next == null) {
            fail(e, "States.NoChoiceMatched", "No Choice rule matched the input of state '" + c.name()
                    + "', and it has no Default");
            return;
        }
        exit(e, outputOf(c.outputPath(), effective, e), next);
    }

    /** Leaves the current state with its output, for the next state or (next == null) the end of the execution. */
    private void exit(Execution e, JsonNode output, String next) {
        Instant now = clock.instant();
        e.record(now, "StateExited", e.stateName, detail("output", output));
        if (next == null) {
            e.record(now, "ExecutionSucceeded", null, detail("output", output));
            e.succeed(output, now);
        } else {
            enter(e, next, output);
        }
    }

    private void fail(Execution e, String error, String cause) {
        Instant now = clock.instant();
        e.record(now, "ExecutionFailed", null, errorDetail(error, cause));
        e.fail(error, cause, now);
    }

    /** Parks the execution, unless the time has already come: then it simply carries on. */
    private void parkUntil(Execution e, Instant until) {
        if (until.isAfter(clock.instant())) {
            e.park(until);
        }
    }

    private Duration scaled(double seconds) {
        double s = seconds * timeScale;
        long whole = (long) s;
        return Duration.ofSeconds(whole, Math.round((s - whole) * 1e9));
    }

    private JsonNode inputOf(RefPath inputPath, Execution e) {
        return inputPath == null ? JsonNodeFactory.instance.objectNode() : select(inputPath, e.stateInput, e, "InputPath");
    }

    private JsonNode outputOf(RefPath outputPath, JsonNode value, Execution e) {
        return outputPath == null ? JsonNodeFactory.instance.objectNode() : select(outputPath, value, e, "OutputPath");
    }

    private JsonNode select(RefPath path, JsonNode value, Execution e, String field) {
        return path.select(value, path.isContext() ? context(e) : null).orElseThrow(() -> new PathFailure(
                "Invalid path '" + path + "' in " + field + " of state '" + e.stateName + "': it selects nothing"));
    }

    /** ResultPath: null keeps the input, $ replaces it, $.a.b puts the result there in a copy, making objects. */
    private static JsonNode withResult(RefPath resultPath, JsonNode input, JsonNode result) {
        if (resultPath == null) {
            return input;
        }
        if (resultPath.isRoot()) {
            return result;
        }
        if (!input.isObject()) {
            throw new PathFailure("ResultPath '" + resultPath + "' needs an object input, not " + input.getNodeType());
        }
        ObjectNode copy = input.deepCopy();
        ObjectNode at = copy;
        List<Object> steps = resultPath.steps();
        for (Object step : steps.subList(0, steps.size() - 1)) {
            JsonNode child = at.get((String) step);
            if (child == null || child.isNull()) {
                child = at.putObject((String) step);
            } else if (!child.isObject()) {
                throw new PathFailure("ResultPath '" + resultPath + "' runs through '" + step + "', which is a "
                        + child.getNodeType() + ", not an object");
            }
            at = (ObjectNode) child;
        }
        at.set((String) steps.get(steps.size() - 1), result);
        return copy;
    }

    private JsonNode context(Execution e) {
        ObjectNode context = JsonNodeFactory.instance.objectNode();
        ObjectNode execution = context.putObject("Execution");
        execution.put("Id", ID_PREFIX + e.name());
        execution.put("Name", e.name());
        execution.put("StartTime", CONTEXT_TIME.format(e.startedAt()));
        execution.set("Input", e.input());
        ObjectNode state = context.putObject("State");
        state.put("Name", e.stateName);
        state.put("EnteredTime", CONTEXT_TIME.format(e.enteredAt));
        state.put("RetryCount", e.retryCount);
        return context;
    }

    private static ObjectNode detail(String key, JsonNode value) {
        ObjectNode d = JsonNodeFactory.instance.objectNode();
        d.set(key, value);
        return d;
    }

    private static ObjectNode errorDetail(String error, String cause) {
        ObjectNode d = JsonNodeFactory.instance.objectNode().put("error", error);
        if (cause != null) {
            d.put("cause", cause);
        }
        return d;
    }
}
