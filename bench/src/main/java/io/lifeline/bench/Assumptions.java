package io.lifeline.bench;

/**
 * What the model cannot measure on Lifeline Local and assumes (each stated in BENCHMARKS.md section 6).
 * Durations are billed Lambda milliseconds; log sizes are bytes per line as CloudWatch Logs ingests them.
 */
public record Assumptions(double authorizerMillis, double routeMillis, double publisherMillisPerChange,
                          double sweepBaseMillis, double sweepMillisPerAgent, double platformLogBytes,
                          double accessLogBytes, double routeLogBytes, double publishLogBytes,
                          double repairLogBytes, double responseBytes, double sqsIdleReceivesPerMinute,
                          double sqsRequestsPerExtraSweep, double xraySampleReservoirPerSecond,
                          double xraySampleRate, double writeUnitsPerTask, double writeUnitsPerChange,
                          double changesPerTask, double changesPerAgentDay, double eventsPerChange,
                          double eventsPerDeath, double sfnTransitionsPerDeath, double itemOverheadBytes,
                          double dashboardPollSeconds, double repairBaseMillis,
                          double eventBytes, double keyReadUnits) {
    static Assumptions defaults() {
        return new Assumptions(10, 15, 30, 60, 0.02, 330, 280, 430, 440, 200, 450, 15, 2, 1, 0.05, 13, 4, 2, 2,
                1, 3, 12, 100, 2, 100, 1_000, 0.5);
    }
}
