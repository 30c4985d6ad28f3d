package io.lifeline.local.http;

import io.lifeline.support.Log;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The front door's count of each client address's refusals (401/403) in a window, and the 429 it answers past
 * {@link FrontDoorLimits#refusalsPerWindow} to a key not authorized recently.
 */
final class RefusalThrottle {
    /** One client address's refusals in the current window (monotonic nanos). */
    private static final class Refusals {
        long windowStart;
        int refused;
        int throttled;
    }

    private final Map<InetAddress, Refusals> refusals = new ConcurrentHashMap<>();
    private final FrontDoorLimits limits;
    private final LongSupplier nanoTime;
    private final Predicate<String> recentlyAuthorized;

    RefusalThrottle(FrontDoorLimits limits, LongSupplier nanoTime, Predicate<String> recentlyAuthorized) {
        this.limits = limits;
        this.nanoTime = nanoTime;
        this.recentlyAuthorized = recentlyAuthorized;
    }

    /**
     * Seconds until {@code address} may be refused again, when it was refused more than
     * {@link Limits#refusalsPerWindow} times in this window and {@code authorization} is not a key authorized
     * recently (so a flood of wrong keys from one machine does not stop the beats of agents on it); else 0. The
     * first throttled request of a window logs one line; the rest of the window logs nothing.
     */
    long throttledFor(InetAddress address, String authorization) {
        Refusals r = refusals.get(address);
        if (r == null || (authorization != null && recentlyAuthorized.test(authorization))) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long windowNanos = limits.refusalWindow().toNanos();
        synchronized (r) {
            if (now - r.windowStart >= windowNanos || r.refused < limits.refusalsPerWindow()) {
                return 0;
            }
            if (r.throttled++ == 0) {
                Log.emit(Log.line("WARN", "front_door")
                        .put("outcome", "refusals_throttled").put("client", address.getHostAddress())
                        .put("refused", r.refused).put("windowSeconds", limits.refusalWindow().toSeconds()));
            }
            long left = windowNanos - (now - r.windowStart);
            return Math.max(1, (left + 999_999_999L) / 1_000_000_000L);
        }
    }

    void refused(InetAddress address) {
        Refusals r = refusals.computeIfAbsent(address, a -> new Refusals());
        long now = nanoTime.getAsLong();
        synchronized (r) {
            if (r.refused == 0 || now - r.windowStart >= limits.refusalWindow().toNanos()) {
                r.windowStart = now;
                r.refused = 0;
                r.throttled = 0;
            }
            r.refused++;
        }
    }
}
