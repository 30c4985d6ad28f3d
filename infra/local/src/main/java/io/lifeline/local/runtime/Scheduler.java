package io.lifeline.local.runtime;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.local.template.SamTemplate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.joda.time.DateTime;

/**
 * EventBridge schedules for Local: each function with a Schedule event is invoked with a real
 * {@link ScheduledEvent}. A function whose environment has {@code SWEEP_INTERVAL_MS} is invoked every
 * {@code SWEEP_INTERVAL_MS} x {@code SWEEPS_PER_INVOCATION} instead of the template's rate (in AWS the pair fills
 * the minute): the sweep's schedule scaled with its interval, so scaled-down intervals work for demos and tests. The
 * sweeps in between travel through the sweep queue, as in AWS (the SQS stand-in, LocalQueues).
 *
 * <p>Each firing is due on a monotonic schedule ({@link System#nanoTime}, which keeps counting while the
 * process is frozen), and its event carries the time it was <em>due</em>, as EventBridge's does: the
 * functions' clock now, less how late the firing is by the monotonic clock. So a firing delayed by a frozen
 * process, a GC pause or a busy scheduler thread arrives late by its own measure, and the sweep skips it
 * ({@link LateSweepGate}); so does the firing after one that was stalled mid-run. Missed firings are
 * not made up back to back: after a late or overrunning firing the next runs a whole period after it ended, so
 * the heartbeats queued behind a stall get at least that period to land before a sweep judges.
 */
public final class Scheduler implements AutoCloseable {
    private static final Pattern RATE = Pattern.compile("rate\\((\\d+) (second|seconds|minute|minutes|hour|hours)\\)");

    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "local-schedule");
        t.setDaemon(true);
        return t;
    });

    private final Clock clock;
    private final LongSupplier nanoTime;
    private final LongSupplier frontDoorWaitNanos;

    /** {@code clock}: the functions' clock, for each event's time (when the schedule was due). */
    Scheduler(FunctionHost host, List<SamTemplate.Schedule> schedules, Clock clock) {
        this(host, schedules, clock, System::nanoTime);
    }

    /** {@code nanoTime}: the monotonic clock the due times are kept on (the executor waits on the real one). */
    Scheduler(FunctionHost host, List<SamTemplate.Schedule> schedules, Clock clock, LongSupplier nanoTime) {
        this(host, schedules, clock, nanoTime, () -> 0);
    }

    /**
     * {@code frontDoorWaitNanos}: how long the oldest request that arrived at the front door has waited for its
     * answer (the front door's oldestWaitNanos). A firing counts as late by at least that much: heartbeats queued
     * at a saturated front door are a stall like a frozen process, and the sweep judges nobody while they wait.
     */
    public Scheduler(FunctionHost host, List<SamTemplate.Schedule> schedules, Clock clock, LongSupplier nanoTime,
              LongSupplier frontDoorWaitNanos) {
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.frontDoorWaitNanos = frontDoorWaitNanos;
        for (SamTemplate.Schedule s : schedules) {
            Duration period = period(host.function(s.functionId()).environment(), s.expression());
            RequestHandler<ScheduledEvent, Object> handler = host.handler(s.functionId());
            new Firing(host, s.functionId(), handler, period.toNanos(), nanoTime.getAsLong() + period.toNanos())
                    .arm();
        }
    }

    /** The period Local fires a schedule at: the sweep's minute scaled to its interval, else the rate. */
    static Duration period(Map<String, String> environment, String expression) {
        String interval = environment.get("SWEEP_INTERVAL_MS");
        if (interval == null) {
            return rate(expression);
        }
        String perSchedule = environment.get("SWEEPS_PER_INVOCATION");
        return Duration.ofMillis(Long.parseLong(interval))
                .multipliedBy(perSchedule == null ? 1 : Long.parseLong(perSchedule));
    }

    static Duration rate(String expression) {
        Matcher m = RATE.matcher(expression);
        if (!m.matches()) {
            throw new IllegalArgumentException("Local runs rate(...) schedules only, not " + expression);
        }
        long n = Long.parseLong(m.group(1));
        return m.group(2).startsWith("second") ? Duration.ofSeconds(n)
                : m.group(2).startsWith("minute") ? Duration.ofMinutes(n) : Duration.ofHours(n);
    }

    /**
     * The next firing, once the one due at {@code due} ran from {@code started} to {@code ended} (all monotonic
     * nanoseconds): {@code runAt} is when it runs, {@code due} is what its lateness is measured from.
     */
    record Next(long runAt, long due) {
    }

    /**
     * On time (the next rate slot, {@code due + period}, is still ahead when the firing ends): the next keeps the
     * rate. Otherwise the firing ran late or long (a stall, a slow sweep), and missed slots are not made up back
     * to back: the next runs a whole period after this one ended, and is due one period after this one
     * <em>started</em>. So a firing that absorbed a stall by starting late (and was skipped) is followed by one on
     * time, while a firing stalled in the middle of its run makes the next one late (and skipped): either way the
     * first sweep to start after a stall judges nobody, and the one after it comes a whole period later.
     */
    static Next next(long due, long periodNanos, long started, long ended) {
        long onRate = due + periodNanos;
        return onRate - ended > 0 ? new Next(onRate, onRate) : new Next(ended + periodNanos, started + periodNanos);
    }

    /** How late a firing is, in ms, when it runs at {@code now} though due at {@code due} (never negative). */
    public static long lateMillis(long due, long now) {
        return Math.max(0, now - due) / 1_000_000;
    }

    /**
     * How late a firing counts, in ms: its own lateness, or the front door's oldest waiting request if that waited
     * longer (a sweep is as stale as the oldest heartbeat it has not seen yet).
     */
    public static long lateMillis(long due, long now, long frontDoorWaitNanos) {
        return Math.max(lateMillis(due, now), Math.max(0, frontDoorWaitNanos) / 1_000_000);
    }

    /** One schedule's chain of firings, each arming the next. */
    private final class Firing implements Runnable {
        private final FunctionHost host;
        private final String functionId;
        private final RequestHandler<ScheduledEvent, Object> handler;
        private final long periodNanos;
        private Next next;

        Firing(FunctionHost host, String functionId, RequestHandler<ScheduledEvent, Object> handler, long periodNanos,
               long first) {
            this.host = host;
            this.functionId = functionId;
            this.handler = handler;
            this.periodNanos = periodNanos;
            this.next = new Next(first, first);
        }

        void arm() {
            try {
                executor.schedule(this, Math.max(0, next.runAt() - nanoTime.getAsLong()), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closed) {
                // Local is shutting down.
            }
        }

        @Override
        public void run() {
            long due = next.due();
            // The clock first, then the monotonic lateness: a stall between the two readings makes the stamp
            // earlier, never later, so it can only make the firing look late, never on time.
            long wall = clock.millis();
            long started = nanoTime.getAsLong();
            try {
                invoke(host, functionId, handler, wall - lateMillis(due, started, frontDoorWaitNanos.getAsLong()));
            } finally {
                next = next(due, periodNanos, started, nanoTime.getAsLong());
                arm();
            }
        }
    }

    private void invoke(FunctionHost host, String functionId, RequestHandler<ScheduledEvent, Object> handler,
                        long dueMillis) {
        ScheduledEvent event = new ScheduledEvent();
        event.setId(UUID.randomUUID().toString());
        event.setSource("aws.events");
        event.setDetailType("Scheduled Event");
        event.setAccount("000000000000");
        event.setRegion("us-east-1");
        // The time the schedule was due, as EventBridge sets it: a sweep that starts well after it knows it was
        // stalled, whether the stall came before the stamp (measured on the monotonic clock) or after it.
        event.setTime(new DateTime(dueMillis));
        try {
            host.awaitRunning();
            handler.handleRequest(event, new LocalContext(functionId, event.getId()));
        } catch (RuntimeException e) {
            System.err.println(functionId + " failed: " + e);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
