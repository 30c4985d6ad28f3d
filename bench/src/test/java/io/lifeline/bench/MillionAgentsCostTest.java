package io.lifeline.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.template.SamTemplate;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The answer docs/scale.md quotes for 1,000,000 agents beating alone every 30 s, pinned: under the template's default
 * {@code FleetSize} (10,000) the cost model refuses them, naming every cap that binds and its figures, on either
 * heartbeat path; under the caps {@code FleetSize=1000000} derives it prices them, per agent-month and a month.
 */
@Tag("unit")
class MillionAgentsCostTest {
    private static Workload workload(String name) {
        return CostModel.workloads(Sweep.PUBLISHED, 0.1, 0.04).stream().filter(w -> w.name().equals(name)).findFirst()
                .orElseThrow();
    }

    private static FleetSizing.Caps caps(String fleetSize) throws Exception {
        JsonNode template = SamTemplate.read(Path.of("..", "template.yaml")).tree();
        return FleetSizing.fromTemplate(template, Integer.parseInt(fleetSize == null
                ? template.at("/Parameters/FleetSize/Default").asText() : fleetSize));
    }

    @Test
    void aMillionAgents_underTheDefaultFleetSize_areRefused_namingTheCaps() throws Exception {
        Deployment d = Deployment.fromTemplate(false);
        FleetSizing.Caps defaults = caps(null);
        Unservable url = assertThrows(Unservable.class, () -> CostModel.bill(workload("1,000,000 agents, single, URL"),
                d, Measures.published(), Assumptions.defaults(), Prices.load(), defaults));
        assertEquals("1,000,000 agents, single, URL: the caps cannot serve this fleet; HeartbeatUrlFunction reserved "
                + "concurrency 67 serves 670 requests/s, the fleet needs 33,333", url.getMessage());
        Unservable api = assertThrows(Unservable.class, () -> CostModel.bill(workload("1,000,000 agents, single, API"),
                d, Measures.published(), Assumptions.defaults(), Prices.load(), defaults));
        assertEquals("1,000,000 agents, single, API: the caps cannot serve this fleet; heartbeat route "
                + "ThrottlingRateLimit 667 serves 667 requests/s, the fleet needs 33,333; HeartbeatFunction reserved "
                + "concurrency 67 serves 670 requests/s, the fleet needs 33,333; AuthorizerFunction reserved "
                + "concurrency 34 serves 340 requests/s, the fleet needs 3,333", api.getMessage());
        assertEquals(List.of("heartbeat route ThrottlingRateLimit", "HeartbeatFunction reserved concurrency",
                "AuthorizerFunction reserved concurrency"), api.shortfalls().stream().map(Shortfall::cap).toList());
    }

    @Test
    void aMillionAgents_underTheCapsTheirFleetSizeDerives_arePriced() throws Exception {
        Deployment d = Deployment.fromTemplate(false);
        FleetSizing.Caps sized = caps("1000000");
        Bill url = CostModel.bill(workload("1,000,000 agents, single, URL"), d, Measures.published(),
                Assumptions.defaults(), Prices.load(), sized);
        Bill api = CostModel.bill(workload("1,000,000 agents, single, API"), d, Measures.published(),
                Assumptions.defaults(), Prices.load(), sized);
        System.out.printf("URL: $%,.0f a month, $%.4f per agent-month; API: $%,.0f, $%.4f%n", url.total(),
                url.totalPerAgent(), api.total(), api.totalPerAgent());
        assertEquals(85_957, url.total(), 1.0);
        assertEquals(0.0860, url.totalPerAgent(), 0.00005);
        // 33,333 requests a second at 3.47 ms keep about 116 environments busy; a key's ten requests in a cache period
        // reach about 9.6 of them, each looking it up once.
        double environments = LineItems.environments(1_000_000 * 86_400.0, 3.47);
        assertEquals(115.7, environments, 0.1);
        double perKey = LineItems.environmentsReached(environments, 10);
        assertEquals(9.62, perKey, 0.01);
        assertEquals(1_000_000.0 * 8_640 * perKey * 0.5 * 0.125 / 1e6, url.usd("key look-ups"), 1e-6);
        assertEquals(186_363, api.total(), 1.0);
        assertEquals(0.1864, api.totalPerAgent(), 0.00005);
    }
}
