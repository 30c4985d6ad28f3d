package io.lifeline.local;

import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.joda.time.DateTime;

/**
 * EventBridge schedules for Local: each function with a Schedule event is invoked with a real
 * {@link ScheduledEvent}. A function whose environment has {@code SWEEP_INTERVAL_MS} is invoked at that
 * period instead of the template's rate, one sweep per invocation (Local sets SweepsPerInvocation to 1),
 * so scaled-down intervals work for demos and tests.
 */
final class Scheduler implements AutoCloseable {
    private static final Pattern RATE = Pattern.compile("rate\\((\\d+) (second|seconds|minute|minutes|hour|hours)\\)");

    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "local-schedule");
        t.setDaemon(true);
        return t;
    });

    private final java.time.Clock clock;

    /** {@code clock}: the functions' clock, for each event's time (when the schedule fired). */
    Scheduler(FunctionHost host, List<SamTemplate.Schedule> schedules, java.time.Clock clock) {
        this.clock = clock;
        for (SamTemplate.Schedule s : schedules) {
            String interval = host.function(s.functionId()).environment().get("SWEEP_INTERVAL_MS");
            Duration period = interval != null ? Duration.ofMillis(Long.parseLong(interval)) : rate(s.expression());
            RequestHandler<ScheduledEvent, Object> handler = host.handler(s.functionId());
            executor.scheduleWithFixedDelay(() -> invoke(host, s.functionId(), handler), period.toMillis(),
                    period.toMillis(), TimeUnit.MILLISECONDS);
        }
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

    private void invoke(FunctionHost host, String functionId, RequestHandler<ScheduledEvent, Object> handler) {
        ScheduledEvent event = new ScheduledEvent();
        event.setId(UUID.randomUUID().toString());
        event.setSource("aws.events");
        event.setDetailType("Scheduled Event");
        event.setAccount("000000000000");
        event.setRegion("us-east-1");
        // The time the schedule fired, as EventBridge sets it: a sweep that starts well after it knows it was stalled.
        event.setTime(new DateTime(clock.millis()));
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
