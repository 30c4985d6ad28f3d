package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.template.SamTemplate;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * template.yaml's FleetCaps mapping is FleetSizing's derivation, row by row and figure by figure, and FleetSize offers
 * exactly its classes; every figure keeps Lambda's rule that a function serves at most 10 requests a second per unit
 * of concurrency, with the headroom the derivation states.
 */
@Tag("unit")
class FleetSizingTest {
    private static final FleetSizing.Inputs IN = FleetSizing.Inputs.defaults();

    private static JsonNode template() throws Exception {
        return SamTemplate.read(Path.of("..", "template.yaml")).tree();
    }

    @Test
    void theTemplatesFleetCaps_areTheDerivation_forEveryFleetSize() throws Exception {
        JsonNode t = template();
        List<Integer> offered = new ArrayList<>();
        t.at("/Parameters/FleetSize/AllowedValues").forEach(v -> offered.add(Integer.parseInt(v.asText())));
        assertEquals(FleetSizing.CLASSES, offered, "FleetSize offers the derivation's classes");
        List<String> rows = new ArrayList<>();
        t.at("/Mappings/FleetCaps").fieldNames().forEachRemaining(rows::add);
        assertEquals(FleetSizing.CLASSES.stream().map(String::valueOf).toList(), rows);
        for (Map.Entry<Integer, FleetSizing.Caps> e : FleetSizing.table(IN).entrySet()) {
            assertEquals(e.getValue(), FleetSizing.fromTemplate(t, e.getKey()), "FleetCaps." + e.getKey());
            JsonNode row = t.at("/Mappings/FleetCaps/" + e.getKey());
            assertEquals(FleetSizing.Caps.KEYS.size(), row.size(), "no figure the derivation does not make: " + row);
        }
        FleetSizing.table(IN).forEach((c, caps) -> System.out.printf("FleetSize %,9d: %s (reserves %,d)%n", c, caps,
                caps.reserved()));
    }

    @Test
    void everyFunction_servesTwiceItsClassesMeanRate_withinTenRequestsASecondPerUnit() {
        for (int agents : FleetSizing.CLASSES) {
            FleetSizing.Caps c = FleetSizing.caps(agents, IN);
            double peak = agents / 30.0 * 2;
            assertTrue(c.heartbeatRouteRate() >= peak && c.heartbeatRouteBurst() >= 2 * c.heartbeatRouteRate() - 1);
            assertTrue(10.0 * c.heartbeat() >= peak && 10.0 * (c.heartbeat() - 1) < peak, agents + ": " + c);
            assertEquals(c.heartbeat(), c.heartbeatUrl(), "either path carries the whole fleet");
            // rps / 10 binds: a 20 ms beat at 2x the rate needs far fewer environments than the rate rule allows.
            assertTrue(peak * IN.heartbeatMillis() / 1000 < c.heartbeat());
            assertTrue(10.0 * c.authorizer() >= agents / 30.0, "every key once within an interval");
            assertTrue(c.authorizer() < c.heartbeat(), "a flood of wrong keys is capped below the fleet's beats");
            assertTrue(c.publisher() >= 10 && c.publisher() % 2 == 0);
        }
        // The duration binds once a request takes more than 100 ms: rps x 0.2 s is twice rps / 10.
        assertEquals(20, FleetSizing.concurrency(100, 200));
        assertEquals(10, FleetSizing.concurrency(100, 20));
    }

    @Test
    void aFleet_isSizedByItsRequests_hostLeasesAndIntervalsCounted() {
        assertEquals(1_000_000, FleetSizing.equivalentAgents(1_000_000, 30, 0, 10), 1e-6);
        assertEquals(100_000, FleetSizing.equivalentAgents(1_000_000, 30, 1, 10), 1e-6);
        assertEquals(550_000, FleetSizing.equivalentAgents(1_000_000, 30, 0.5, 10), 1e-6);
        assertEquals(20_000, FleetSizing.equivalentAgents(10_000, 15, 0, 1), 1e-6);
        assertEquals(10_000, FleetSizing.classFor(10_000));
        assertEquals(100_000, FleetSizing.classFor(10_001));
        assertEquals(1_000_000, FleetSizing.classFor(FleetSizing.equivalentAgents(1_000_000, 30, 0.5, 10)));
        assertThrows(IllegalArgumentException.class, () -> FleetSizing.classFor(10_000_000));
    }
}
