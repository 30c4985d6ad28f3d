package io.lifeline.client;

import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.template.SamTemplate;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** A real Lifeline Local for a test class (team "local", stale after 2 s, a sweep every 500 ms). */
public final class LocalHarness {
    private LocalHarness() {
    }

    public static LifelineLocal start() throws Exception {
        return LifelineLocal.start(new LifelineLocal.Options(0, null, SamTemplate.bundled(),
                Map.of("StaleAfterSeconds", "2", "SweepIntervalMillis", "500"), Clock.systemUTC()));
    }

    /** {@link #start} for a class's static field (closed by {@code @AutoClose}): a failed start fails the class. */
    public static LifelineLocal started() {
        try {
            return start();
        } catch (Exception e) {
            throw new IllegalStateException("Lifeline Local did not start", e);
        }
    }

    public static LifelineClient client(LifelineLocal local) {
        return LifelineClient.builder().url(local.url()).team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey())
                .build();
    }

    /** Polls {@code condition} every 50 ms until it holds or {@code within} passes; answers whether it held. */
    public static boolean eventually(Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return condition.getAsBoolean();
    }
}
