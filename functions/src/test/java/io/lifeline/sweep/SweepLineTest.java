package io.lifeline.sweep;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sweep's one log line names what it did, host leases included (issue 13). */
class SweepLineTest {
    private static Sweeper.Report report(List<String> hostsExpired) {
        return new Sweeper.Report(Instant.parse("2026-03-01T12:00:00Z"), 12, 10, List.of("acme/a-1"), 2, 0, 0,
                List.of(), 1.5, Duration.ofMillis(40), 0, List.of(), hostsExpired, 0);
    }

    @Test
    void line_ofASweepThatFoundSilentHosts_namesEachHostAsTeamSlashHost() {
        ObjectNode line = SweepHandler.line(report(List.of("acme/host-1", "beta/host-9")));
        assertEquals(List.of("acme/host-1", "beta/host-9"),
                Json.MAPPER.convertValue(line.get("hostsExpired"), List.class));
        assertEquals("acted", line.get("outcome").asText());
    }

    @Test
    void line_ofASweepWithNoSilentHost_hasAnEmptyHostsExpired() {
        ObjectNode line = SweepHandler.line(report(List.of()));
        assertEquals(0, line.get("hostsExpired").size());
        assertEquals(true, line.get("hostsExpired").isArray());
    }
}
