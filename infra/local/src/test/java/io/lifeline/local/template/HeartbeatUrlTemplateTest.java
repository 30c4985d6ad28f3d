package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.SamTemplate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat URL in template.yaml, read as Local reads it (CloudFormation's tags in their long form): the heartbeat
 * function's Function URL and its two public grants, switched by EnableHeartbeatUrl; the key cache period equal to
 * the authorizer's ReauthorizeEvery; every function's own log group with a retention; JSON logs with a system log
 * level; no trace of its own on the heartbeat path unless HeartbeatTracing turns it up.
 */
@Tag("unit")
class HeartbeatUrlTemplateTest {
    static JsonNode root() throws Exception {
        return TestStack.template().tree();
    }

    static List<String> ofType(JsonNode resources, String type) {
        List<String> ids = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> r = it.next();
            if (type.equals(r.getValue().path("Type").asText())) {
                ids.add(r.getKey());
            }
        }
        return ids;
    }

    @Test
    void heartbeatUrl_isPublicOnTheLiveAlias_withBothGrants_andSwitchedByOneParameter() throws Exception {
        JsonNode root = root();
        JsonNode resources = root.path("Resources");
        List<String> urls = ofType(resources, "AWS::Lambda::Url");
        assertEquals(List.of("HeartbeatFunctionUrl"), urls, "one Function URL, on the heartbeat URL's own function only");
        JsonNode url = resources.path("HeartbeatFunctionUrl");
        assertEquals("NONE", url.at("/Properties/AuthType").asText());
        assertTrue(url.at("/Properties/Cors").isMissingNode(), "no CORS: agents are not browsers");
        assertEquals("HeartbeatUrlFunction.Alias", url.at("/Properties/TargetFunctionArn/Ref").asText());
        assertEquals("HasHeartbeatUrl", url.path("Condition").asText());
        Set<String> actions = new HashSet<>();
        for (String id : ofType(resources, "AWS::Lambda::Permission")) {
            JsonNode p = resources.path(id).path("Properties");
            if ("HeartbeatUrlFunction.Alias".equals(p.at("/FunctionName/Ref").asText())) {
                assertEquals("*", p.path("Principal").asText());
                assertEquals("HasHeartbeatUrl", resources.path(id).path("Condition").asText(), id);
                actions.add(p.path("Action").asText());
                if (p.path("Action").asText().equals("lambda:InvokeFunction")) {
                    assertTrue(p.path("InvokedViaFunctionUrl").asBoolean(), "public invoke only through the URL");
                } else {
                    assertEquals("NONE", p.path("FunctionUrlAuthType").asText());
                }
            }
        }
        assertEquals(Set.of("lambda:InvokeFunctionUrl", "lambda:InvokeFunction"), actions);
        assertEquals("HasHeartbeatUrl", root.at("/Outputs/HeartbeatUrl/Condition").asText());
        // Only the reserved profile deploys it (nothing would cap a flood otherwise); the parameter turns it off, and
        // Local follows both.
        SamTemplate template = TestStack.template();
        assertEquals(Map.of(), template.functionUrls(Map.of()), "the default profile, unreserved, has no URL");
        assertEquals(Map.of("HeartbeatUrlFunction", "NONE"),
                template.functionUrls(Map.of("ConcurrencyProfile", "reserved")));
        assertEquals(Map.of(), template.functionUrls(Map.of("ConcurrencyProfile", "reserved",
                "EnableHeartbeatUrl", "false")));
        assertEquals(Map.of("HeartbeatUrlFunction", "NONE"),
                template.functionUrls(LifelineLocal.localParameters(Map.of())), "Local runs the reserved profile");
    }

    @Test
    void keyCachePeriod_isTheAuthorizersReauthorizeEvery() throws Exception {
        JsonNode root = root();
        int reauthorize = TestStack.template().authorizerCacheSeconds();
        assertTrue(reauthorize > 0);
        for (String id : List.of("HeartbeatFunction", "HeartbeatUrlFunction")) {
            JsonNode env = root.at("/Resources/" + id + "/Properties/Environment/Variables");
            assertEquals(reauthorize, env.path("KEY_CACHE_SECONDS").asInt(), id + ": " + env);
            assertTrue(env.path("METRICS_SUMMARY_SECONDS").asInt() > 0, id + ": " + env);
        }
    }

    @Test
    void everyFunction_logsJsonToItsOwnGroup_withARetention() throws Exception {
        JsonNode root = root();
        JsonNode resources = root.path("Resources");
        JsonNode global = root.at("/Globals/Function/LoggingConfig");
        assertEquals("JSON", global.path("LogFormat").asText());
        assertEquals("SystemLogLevel", global.at("/SystemLogLevel/Ref").asText());
        assertEquals("WARN", root.at("/Parameters/SystemLogLevel/Default").asText());
        assertEquals(30, root.at("/Parameters/LogRetentionDays/Default").asInt());
        Set<String> groups = new HashSet<>();
        for (String fn : ofType(resources, "AWS::Serverless::Function")) {
            String group = resources.path(fn).at("/Properties/LoggingConfig/LogGroup/Ref").asText();
            assertFalse(group.isEmpty(), fn + " names its log group");
            JsonNode g = resources.path(group);
            assertEquals("AWS::Logs::LogGroup", g.path("Type").asText(), fn);
            assertEquals("LogRetentionDays", g.at("/Properties/RetentionInDays/Ref").asText(), fn);
            assertTrue(groups.add(group), "one group per function: " + group);
        }
        assertTrue(groups.size() >= 11, groups.toString());
    }

    @Test
    void heartbeatTracing_isOffByDefault_andOneParameterTurnsItUp() throws Exception {
        JsonNode root = root();
        JsonNode tracing = root.at("/Resources/HeartbeatFunction/Properties/Tracing/Fn::If");
        assertEquals("TraceHeartbeats", tracing.get(0).asText());
        assertEquals("Active", tracing.get(1).asText());
        assertEquals("PassThrough", tracing.get(2).asText());
        assertEquals("PassThrough", root.at("/Parameters/HeartbeatTracing/Default").asText());
        assertEquals("HeartbeatTracing", root.at("/Conditions/TraceHeartbeats/Fn::Equals").get(0).path("Ref").asText());
    }
}
