package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On AWS: template.yaml's HTTP API throttles every route (DefaultRouteSettings), gives the four heartbeat routes,
 * and only those, a higher limit taken from FleetSize's row of FleetCaps (RouteSettings naming real route keys), and
 * writes an access log to a log group with a retention and no request header in its format (so never a key).
 */
@Tag("unit")
class ApiThrottlingTemplateTest {
    /** The heartbeat function's routes: the beat, the batch, and runtimes' hook events (as frequent as beats). */
    private static final Set<String> HEARTBEAT_ROUTES = Set.of("POST /v1/teams/{team}/agents/{agentId}/heartbeat",
            "POST /v1/teams/{team}/heartbeats", "POST /v1/teams/{team}/agents/{agentId}/hooks/{runtime}",
            "POST /v1/teams/{team}/hooks/{runtime}");

    @Test
    void httpApi_throttlesEveryRoute_andTheHeartbeatRoutesLessTightly_withAnAccessLogKeptForADefinedTime()
            throws Exception {
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(TestStack.templatePath().toFile());
        JsonNode api = root.at("/Resources/HttpApi/Properties");
        JsonNode defaults = api.get("DefaultRouteSettings");
        int defaultRate = defaults.get("ThrottlingRateLimit").asInt();
        int defaultBurst = defaults.get("ThrottlingBurstLimit").asInt();
        assertTrue(defaultRate > 0 && defaultBurst >= defaultRate, defaults.toString());

        Set<String> routeKeys = new HashSet<>(LocalGatewayRoutes.of(TestStack.template()));
        JsonNode routes = api.get("RouteSettings");
        Set<String> overridden = new HashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = routes.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> r = it.next();
            assertTrue(routeKeys.contains(r.getKey()), "not a route of the template: " + r.getKey());
            // FleetSize's figures (FleetCaps), for every size: looser than the other routes', burst above rate.
            for (JsonNode size : root.at("/Parameters/FleetSize/AllowedValues")) {
                int rate = fleetCap(root, r.getValue().get("ThrottlingRateLimit"), size.asText());
                int burst = fleetCap(root, r.getValue().get("ThrottlingBurstLimit"), size.asText());
                assertTrue(rate > defaultRate && burst > defaultBurst && burst >= rate, size + ": " + r);
            }
            overridden.add(r.getKey());
        }
        assertEquals(HEARTBEAT_ROUTES, overridden, "only the heartbeat function's routes are looser");

        JsonNode log = api.get("AccessLogSettings");
        assertFalse(log.get("Format").asText().contains("$context.identity.apiKey"), log.toString());
        assertFalse(log.get("Format").asText().toLowerCase().contains("header"), log.toString());
        JsonNode group = root.at("/Resources/HttpApiAccessLogs");
        assertEquals("AWS::Logs::LogGroup", group.get("Type").asText());
        // A retention: a number of days, or the LogRetentionDays parameter (30 days by default).
        JsonNode retention = group.at("/Properties/RetentionInDays");
        int days = retention.isNumber() ? retention.asInt()
                : root.at("/Parameters/" + retention.asText() + "/Default").asInt();
        assertTrue(days > 0, group.toString());
    }

    /** A route setting's figure: the FleetCaps row of {@code fleetSize} a {@code !FindInMap} names (read as a list). */
    private static int fleetCap(JsonNode root, JsonNode setting, String fleetSize) {
        assertTrue(setting.isArray() && setting.size() == 3 && "FleetCaps".equals(setting.get(0).asText()),
                "derived from FleetSize: " + setting);
        JsonNode value = root.at("/Mappings/FleetCaps/" + fleetSize + "/" + setting.get(2).asText());
        assertTrue(value.isInt(), fleetSize + ": " + setting);
        return value.asInt();
    }

    /** The route keys template.yaml declares on its functions, as Local's gateway serves them. */
    private static final class LocalGatewayRoutes {
        static Set<String> of(SamTemplate template) {
            Set<String> keys = new HashSet<>();
            template.functions(Map.of(), LifelineLocal.resourceNames(template, LocalTables.named(template, "t"), "b")).forEach(f -> f.routes().forEach(r -> keys.add(r.routeKey())));
            return keys;
        }
    }
}
