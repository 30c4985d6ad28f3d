package io.lifeline.junit;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.client.LifelineClient;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.runtime.LocalContext;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.joda.time.DateTime;

/**
 * One Lifeline Local started for a test class by {@link LifelineLocalExtension}: the real handlers, store, sweep,
 * outbox and revive flow, on 127.0.0.1, in memory, on a {@link TestClock}.
 *
 * <p>Time is the test's: {@link #advance} moves the clock, and {@link #sweep} judges the fleet at once, as the
 * schedule would at the clock's time; {@link #elapse} lets time pass sweep by sweep. Local's own schedule also runs (once a minute of real time), on the
 * same clock, so it judges exactly what {@link #sweep} would.
 */
public final class LocalLifeline {
    private final LifelineLocal local;
    private final TestClock clock;
    private final Duration sweepEvery;

    LocalLifeline(LifelineLocal local, TestClock clock, Duration sweepEvery) {
        this.local = local;
        this.clock = clock;
        this.sweepEvery = sweepEvery;
    }

    /** The API's base URL (http://127.0.0.1:port). */
    public URI url() {
        return local.url();
    }

    /** The heartbeat URL (Local's stand-in for the Lambda function URL beats may go to). */
    public URI heartbeatUrl() {
        return local.heartbeatUrl();
    }

    /** The team Local creates, {@code local}. */
    public String team() {
        return LifelineLocal.LOCAL_TEAM;
    }

    /** The team's admin key. */
    public String apiKey() {
        return local.adminKey();
    }

    /** A client for the team, with its admin key. */
    public LifelineClient client() {
        return LifelineClient.builder().url(url()).team(team()).apiKey(apiKey()).build();
    }

    public TestClock clock() {
        return clock;
    }

    /** Moves the clock forward; nothing is judged until the next {@link #sweep} ({@link #elapse} does both). */
    public Instant advance(Duration d) {
        return clock.advance(d);
    }

    /**
     * Lets {@code d} pass as it would in a deployment: the clock moves one sweep interval at a time (15 s unless the
     * extension was built with another) and the fleet is swept after each step, so misses are counted as the
     * schedule counts them (one per sweep, and an agent dies when its misses reach its grace). Answers every id the
     * sweeps judged dead.
     */
    public List<String> elapse(Duration d) {
        List<String> dead = new ArrayList<>();
        Duration left = d;
        while (left.compareTo(Duration.ZERO) > 0) {
            Duration step = left.compareTo(sweepEvery) < 0 ? left : sweepEvery;
            clock.advance(step);
            dead.addAll(sweep());
            left = left.minus(step);
        }
        return dead;
    }

    /**
     * One sweep now, at the clock's time, as the schedule would run it: silent agents past their allowance are
     * marked dead (their alerts, revive flows and hand-backs follow through the outbox, a moment later: poll for
     * them with {@link #eventually}). Answers what the sweep function answers (the ids it judged dead or skipped).
     */
    public List<String> sweep() {
        RequestHandler<ScheduledEvent, List<String>> sweep = local.host().handler("SweepFunction");
        ScheduledEvent event = new ScheduledEvent();
        event.setTime(new DateTime(clock.millis()));
        return sweep.handleRequest(event, new LocalContext("SweepFunction", UUID.randomUUID().toString()));
    }

    /**
     * Polls {@code condition} every 20 ms of real time until it holds or {@code within} passes; answers whether it
     * held. For what follows a change asynchronously (events on the log, a revive flow), never to wait out time.
     */
    public boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(20);
        }
        return condition.getAsBoolean();
    }

    /** Local itself, for what this handle does not cover (its tables, event bus, flows). */
    public LifelineLocal local() {
        return local;
    }
}
