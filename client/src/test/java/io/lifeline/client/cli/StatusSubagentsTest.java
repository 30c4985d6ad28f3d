package io.lifeline.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.local.app.LifelineLocal;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code lifeline status AGENT} and the SDK's agent view show a parent's running subagents with since when, as
 * Claude Code's {@code SubagentStart} and {@code SubagentStop} hooks (posted to a real Lifeline Local) left them.
 */
@Tag("e2e")
@Timeout(60)
class StatusSubagentsTest {
    private static LifelineLocal local;
    private static LifelineClient client;
    private static Path noConfig;

    @BeforeAll
    static void startLocal() throws Exception {
        local = LocalHarness.start();
        client = LocalHarness.client(local);
        noConfig = Files.createTempDirectory("lifeline-noconfig");
    }

    @AfterAll
    static void stopLocal() throws Exception {
        local.close();
    }

    private static void hook(String agentId, String body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create(local.url() + "/v1/teams/" + LifelineLocal.LOCAL_TEAM
                        + "/agents/" + agentId + "/hooks/claude-code"))
                .header("Authorization", "Bearer " + local.adminKey()).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> answer = HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), answer.body());
    }

    private static String status(String agentId) {
        StringWriter out = new StringWriter();
        CommandLine cl = new CommandLine(new LifelineCli(Map.of("LIFELINE_URL", local.url().toString(),
                "LIFELINE_KEY", local.adminKey(), "XDG_CONFIG_HOME", noConfig.toString()), d -> { }, Path.of("")));
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        assertEquals(0, cl.execute("status", agentId));
        return out.toString();
    }

    @Test
    void statusListsRunningSubagentsWithSince_andTheStopRemovesOne() throws Exception {
        client.register(RegisterAgent.of("parent-1", "parent", "worker"));
        hook("parent-1", "{\"session_id\":\"s\",\"hook_event_name\":\"SessionStart\"}");
        hook("parent-1", "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\",\"agent_id\":\"sub-a\","
                + "\"agent_type\":\"Explore\"}");
        hook("parent-1", "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStart\",\"agent_id\":\"sub-b\","
                + "\"agent_type\":\"general-purpose\"}");
        AgentView v = client.agent("parent-1");
        List<String> ids = new ArrayList<>();
        v.subagents().forEach(s -> ids.add(s.id()));
        assertEquals(List.of("sub-a", "sub-b"), ids);
        assertTrue(v.subagents().get(0).since() != null);
        String shown = status("parent-1");
        assertTrue(shown.contains("  subagents:       2 running"), shown);
        assertTrue(shown.contains("    sub-a (Explore) since "), shown);

        hook("parent-1", "{\"session_id\":\"s\",\"hook_event_name\":\"SubagentStop\",\"agent_id\":\"sub-a\"}");
        String after = status("parent-1");
        assertTrue(after.contains("  subagents:       1 running"), after);
        assertFalse(after.contains("sub-a"), after);
    }
}
