package io.lifeline.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Figures measured from the functions' real output: the heartbeat handler's warm time (section 3's in-process
 * p50: what Lambda bills it for, less the network), the sweep's line at idle (bytes, as CloudWatch Logs ingests
 * it), and the log bytes and key look-ups a beat costs on each path ({@link ObservabilityBench}: the heartbeat
 * function's lines, and the authorizer's on the API path), keyed {@code url/N} or {@code api/N} for N agents a
 * request.
 */
public record Measures(double heartbeatMillis, double sweepLineBytes, Map<String, BeatLog> beatLogs) {
    /** The last published figures (BENCHMARKS.md section 6), for the unit tests and a run that measures none. */
    static Measures published() {
        Map<String, BeatLog> logs = new LinkedHashMap<>();
        logs.put("url/1", new BeatLog(8.46, 0));
        logs.put("api/1", new BeatLog(7.11, 18.517));
        logs.put("url/10", new BeatLog(0.855, 0));
        logs.put("api/10", new BeatLog(0.72, 1.852));
        logs.put("url/25", new BeatLog(0.285, 0));
        logs.put("api/25", new BeatLog(0.24, 0.74));
        return new Measures(3.47, 413, logs);
    }

    BeatLog log(boolean viaUrl, int perRequest) {
        BeatLog l = beatLogs.get((viaUrl ? "url/" : "api/") + perRequest);
        if (l == null) {
            throw new IllegalArgumentException("no log figure measured for " + (viaUrl ? "url/" : "api/")
                    + perRequest + ": " + beatLogs.keySet());
        }
        return l;
    }
}
