package io.lifeline.client;

import java.time.Duration;

/** How the client waits between retries; injected so tests can record the delays without waiting. */
@FunctionalInterface
public interface Sleeper {
    Sleeper REAL = d -> Thread.sleep(d.toMillis());

    void sleep(Duration duration) throws InterruptedException;
}
