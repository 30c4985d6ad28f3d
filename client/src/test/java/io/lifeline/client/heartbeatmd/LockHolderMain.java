package io.lifeline.client.heartbeatmd;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Run in a second JVM by {@link HeartbeatLockTest}: takes the lock on args[0], prints LOCKED, holds it for args[1]
 * milliseconds, releases it and exits.
 */
public final class LockHolderMain {
    private LockHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        try (HeartbeatLock lock = HeartbeatLock.acquire(Path.of(args[0]), Duration.ofSeconds(10), Duration.ofMinutes(2))) {
            System.out.println("LOCKED " + lock.lockFile());
            System.out.flush();
            Thread.sleep(Long.parseLong(args[1]));
        }
    }
}
