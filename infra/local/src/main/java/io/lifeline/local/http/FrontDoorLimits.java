package io.lifeline.local.http;

import java.time.Duration;

/** The front door's limits (README, "Lifeline Local's front door"). */
record FrontDoorLimits(Duration headerTimeout, Duration bodyTimeout, Duration idleTimeout, int maxUriBytes,
                       int maxHeaderBytes, int maxHeaders, int maxBodyBytes, int maxConnectionsPerClient,
                       int refusalsPerWindow, Duration refusalWindow) {
    /**
     * 10 s for a head, 30 s for a body, 60 s idle between keep-alive requests; an 8 KiB request line, a
     * 16 KiB head of at most 100 lines, API Gateway's 10 MB payload (the handlers refuse far smaller bodies
     * with their own 413), 64 connections per client address; 20 refusals (401/403) per client address a
     * second, past which its requests with a key not recently authorized are answered 429.
     */
    static FrontDoorLimits defaults() {
        return new FrontDoorLimits(Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60), 8 * 1024,
                16 * 1024, 100, 10 * 1024 * 1024, 64, 20, Duration.ofSeconds(1));
    }
}
