package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.engine.Engine;
import java.time.Clock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The observability bench's arithmetic, and its measurement on a short run (counts, never times). */
@Tag("store")
class ObservabilityBenchTest {
    @Test
    void price_ofOneAgentAt30s_itemisesIngressLambdaLogsKeysAndTraces() {
        ObservabilityBench.Figures f = new ObservabilityBench.Figures("x", 1, 1000, 100, 0, 0.001);
        ObservabilityBench.Lines api = ObservabilityBench.price(f, 30, false, 0);
        // 86,400 beats a month: $0.0864 at API Gateway's $1.00 a million.
        assertEquals(0.0864, api.ingress(), 1e-9);
        ObservabilityBench.Lines url = ObservabilityBench.price(f, 30, true, 0);
        assertEquals(0, url.ingress());
        assertEquals(86_400 * 0.20 / 1e6, url.lambdaRequests(), 1e-12);
        // 100 bytes a beat: 8.64 MB a month at $0.50 a GB.
        assertEquals(86_400 * 100 / 1e9 * 0.50, url.logs(), 1e-12);
        assertEquals(86_400 * 0.001 * 0.5 * 0.125 / 1e6, url.keyLookups(), 1e-15);
        assertEquals(86_400 * 5.0 / 1e6, ObservabilityBench.price(f, 30, true, 1.0).traces(), 1e-12);
        assertEquals(url.lambdaRequests() + url.logs() + url.keyLookups(), url.total(), 1e-12);
    }

    @Test
    void measure_throughTheUrl_countsLogBytesAndKeyLookupsOfTheRealHandlers() throws Exception {
        DynamoDbClient store = new Engine(Clock.systemUTC()).client();
        ObservabilityBench.Figures url = ObservabilityBench.measure(store, true, 1, 200);
        assertTrue(url.logBytesPerBeat() > 0 && url.logBytesPerBeat() <= 50, url.toString());
        assertEquals(0, url.authorizerLogBytesPerBeat(), "no authorizer on the URL path");
        // One GetItem per key and cache period (300 s): one beat in ten at 30 s.
        assertEquals(30.0 / 300, url.keyLookupsPerBeat(), 1e-9, url.toString());
        if (Boolean.getBoolean("lifeline.observabilityBench")) {
            ObservabilityBench.main(new String[0]);
        }
    }
}
