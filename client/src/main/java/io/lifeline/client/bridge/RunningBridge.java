package io.lifeline.client.bridge;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * An {@link OpencodeBridge} running on its own threads, as {@code lifeline bridge opencode} runs it and as
 * {@code lifeline daemon --opencode} runs it inside the daemon: a reader that follows the event stream (the bridge
 * reconnects with backoff when it drops), and a timer that sends the beats coalescing held back once their interval
 * has passed. {@link #close(Duration)} stops both within a bound: the stream is closed, a backoff wait is cut short,
 * and no reconnect follows.
 */
public final class RunningBridge implements AutoCloseable {
    /** How long {@link #close()} waits for the reader to end. */
    public static final Duration STOP_WITHIN = Duration.ofSeconds(10);

    private final OpencodeBridge bridge;
    private final Thread reader;
    private final ScheduledExecutorService timer;
    private volatile boolean closed;

    private RunningBridge(OpencodeBridge bridge, Duration interval, String name, Consumer<String> log) {
        this.bridge = Objects.requireNonNull(bridge);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name + "-flush");
            t.setDaemon(true);
            return t;
        });
        this.reader = new Thread(() -> follow(log), name);
        reader.setDaemon(true);
    }

    /**
     * Starts {@code bridge}: the reader now, the flush timer every quarter of {@code interval} (at least 100 ms).
     * {@code name} names the threads; {@code log} hears a reader that failed unexpectedly (it is started again).
     */
    public static RunningBridge start(OpencodeBridge bridge, Duration interval, String name, Consumer<String> log) {
        RunningBridge running = new RunningBridge(bridge, interval, name, log);
        long tick = Math.max(100, interval.toMillis() / 4);
        running.timer.scheduleWithFixedDelay(running::flush, tick, tick, TimeUnit.MILLISECONDS);
        running.reader.start();
        return running;
    }

    public OpencodeBridge bridge() {
        return bridge;
    }

    /** Whether the reader still runs (false once closed and stopped). */
    public boolean isRunning() {
        return reader.isAlive();
    }

    /** Waits until the reader ends (the bridge closed, or this thread interrupted). */
    public void await() throws InterruptedException {
        reader.join();
    }

    private void flush() {
        try {
            bridge.flushDue();
        } catch (RuntimeException e) {
            // a beat's failure is counted and kept pending by the bridge; anything else must not end the timer
            System.getLogger(RunningBridge.class.getName()).log(System.Logger.Level.WARNING, "bridge flush", e);
        }
    }

    /** The bridge's own loop reconnects; this one only outlives a bug in it, after a pause, until closed. */
    private void follow(Consumer<String> log) {
        while (!closed) {
            try {
                bridge.run();
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                log.accept("the bridge failed (" + e + "); starting it again in 5 s");
                try {
                    Thread.sleep(5_000);
                } catch (InterruptedException stopped) {
                    return;
                }
            }
        }
    }

    /**
     * Stops the bridge: no more beats after this returns true. Answers whether the reader ended within
     * {@code within} (a beat in flight to Lifeline is given that long).
     */
    public boolean close(Duration within) {
        closed = true;
        bridge.close();
        reader.interrupt(); // cuts a reconnect backoff short
        timer.shutdownNow();
        try {
            reader.join(Math.max(1, within.toMillis()));
            timer.awaitTermination(Math.max(1, within.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !reader.isAlive();
    }

    @Override
    public void close() {
        close(STOP_WITHIN);
    }
}
