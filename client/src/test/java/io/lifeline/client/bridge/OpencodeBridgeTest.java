package io.lifeline.client.bridge;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LocalHarness;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.Sleeper;
import io.lifeline.client.bridge.OpencodeBridge.AgentRef;
import io.lifeline.client.model.RegisterAgent;
import io.lifeline.client.model.TransitionView;
import io.lifeline.local.app.LifelineLocal;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bridge's mapping and coalescing against a real Lifeline Local, with opencode's events (in the shapes a real
 * {@code opencode serve} 1.18 streams them) handed to {@link OpencodeBridge#handle} and time moved on a test
 * clock. {@link OpencodeBridgeOpencodeTest} runs the bridge against a real opencode server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class OpencodeBridgeTest {
    private static final Instant START = Instant.parse("2026-11-24T12:00:00Z");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static LifelineLocal local;
    private static LifelineClient admin;

    @BeforeAll
    static void start() throws Exception {
        local = LocalHarness.start();
        admin = LocalHarness.client(local);
    }

    @AfterAll
    static void stop() throws Exception {
        if (local != null) {
            local.close();
        }
    }

    private static OpencodeApi nowhere() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new OpencodeApi(URI.create("http://127.0.0.1:" + s.getLocalPort()), null);
        }
    }

    private static OpencodeBridge bridge(MutableClock clock, Map<String, AgentRef> given,
            AtomicReference<LifelineClient> client) throws Exception {
        return new OpencodeBridge(nowhere(), team -> client.get(), given, Duration.ofSeconds(10), clock,
                Sleeper.REAL, line -> { });
    }

    static JsonNode event(String json) {
        try {
            return JSON.readTree(json.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    static JsonNode created(String session, String title) {
        return event("{'type':'session.created','properties':{'sessionID':'" + session + "','info':{'id':'" + session
                + "','title':'" + title + "'}}}");
    }

    static JsonNode status(String session, String type) {
        return event("{'type':'session.status','properties':{'sessionID':'" + session + "','status':{'type':'" + type
                + "'}}}");
    }

    static JsonNode messageUpdated(String session) {
        return event("{'type':'message.updated','properties':{'sessionID':'" + session + "','info':{'role':'assistant',"
                + "'sessionID':'" + session + "'}}}");
    }

    static JsonNode toolDone(String session) {
        return event("{'type':'message.part.updated','properties':{'sessionID':'" + session + "','part':{'type':'tool',"
                + "'tool':'bash','state':{'status':'completed'},'sessionID':'" + session + "'}}}");
    }

    private static void register(String agentId) {
        admin.register(RegisterAgent.of(agentId, agentId, "worker").withStaleAfterSeconds(3600));
    }

    private static List<String> flips(String agentId) {
        List<TransitionView> all = new ArrayList<>(admin.allTransitions(agentId));
        Collections.reverse(all);
        return all.stream().map(t -> t.from() + "->" + t.to()).toList();
    }

    @Test
    void handle_manyEventsWithinAnInterval_sendsOneBeatPerIntervalAndEveryStatusChange() throws Exception {
        register("br-c1");
        MutableClock clock = new MutableClock(START);
        OpencodeBridge bridge = bridge(clock, Map.of(), new AtomicReference<>(admin));
        bridge.handle(created("ses_c1", "teams::local::agent::br-c1::role::worker"));
        assertEquals(1, bridge.stats().beats(), "a new session beats its agent (joining it): ready");
        assertEquals("ready", admin.agent("br-c1").status());

        bridge.handle(status("ses_c1", "busy"));
        for (int i = 0; i < 5; i++) {
            bridge.handle(messageUpdated("ses_c1"));
        }
        bridge.handle(toolDone("ses_c1"));
        assertEquals(2, bridge.stats().beats(), "busy is a status change, sent at once");
        assertEquals(6, bridge.stats().coalesced(), "activity within the interval is held back");
        assertEquals("working", admin.agent("br-c1").status());

        bridge.handle(status("ses_c1", "idle"));
        bridge.handle(status("ses_c1", "busy"));
        bridge.handle(status("ses_c1", "idle"));
        assertEquals(5, bridge.stats().beats(), "every status change goes out, even within the interval");
        assertEquals("ready", admin.agent("br-c1").status());

        bridge.handle(event("{'type':'server.heartbeat','properties':{}}"));
        bridge.flushDue();
        assertEquals(5, bridge.stats().beats(), "nothing is due before the interval has passed");
        clock.advance(Duration.ofSeconds(10));
        bridge.flushDue();
        assertEquals(6, bridge.stats().beats(), "the held-back keep-alive goes out once the interval has passed");
        bridge.flushDue();
        assertEquals(6, bridge.stats().beats(), "and only once");
        List<String> expected = List.of("offline->ready", "ready->working", "working->ready", "ready->working",
                "working->ready");
        // The outbox records transitions a moment after the change: wait for it, bounded.
        LocalHarness.eventually(Duration.ofSeconds(20), () -> flips("br-c1").equals(expected));
        assertEquals(expected, flips("br-c1"));
    }

    @Test
    void handle_eventsOfSessionsItCannotMap_writesNothing() throws Exception {
        register("br-u1");
        MutableClock clock = new MutableClock(START);
        OpencodeBridge bridge = bridge(clock, Map.of(), new AtomicReference<>(admin));
        List<String> flipsBefore = flips("br-u1");
        bridge.handle(created("ses_u1", "a scratch session"));
        bridge.handle(created("ses_u2", "teams::local::agents::br-u1"));
        bridge.handle(status("ses_u1", "busy"));
        bridge.handle(toolDone("ses_u1"));
        bridge.handle(status("ses_u2", "retry"));
        bridge.handle(event("{'type':'session.error','properties':{'error':{'name':'APIError','data':"
                + "{'message':'context window exceeded'}}}}"));
        bridge.handle(event("{'type':'session.idle','properties':{'sessionID':'ses_unknown'}}"));
        clock.advance(Duration.ofMinutes(1));
        bridge.flushDue();
        assertEquals(0, bridge.stats().beats());
        assertEquals(0, bridge.stats().errorsReported());
        assertEquals(8, bridge.stats().ignoredEvents(), "each event (and the retry's error) ignored");
        assertEquals("offline", admin.agent("br-u1").status());
        assertEquals(flipsBefore, flips("br-u1"));
        assertEquals(0, admin.agent("br-u1").errorsReported() == null ? 0 : admin.agent("br-u1").errorsReported());
    }

    @Test
    void flushDue_afterLifelineWasUnreachable_deliversTheStatusChangeItHeld() throws Exception {
        register("br-f1");
        admin.join("br-f1");
        LifelineClient unreachable;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            unreachable = LifelineClient.builder().url("http://127.0.0.1:" + s.getLocalPort())
                    .team(LifelineLocal.LOCAL_TEAM).apiKey(local.adminKey()).retry(RetryPolicy.none()).build();
        }
        AtomicReference<LifelineClient> client = new AtomicReference<>(unreachable);
        MutableClock clock = new MutableClock(START);
        OpencodeBridge bridge = bridge(clock, Map.of("ses_f1", new AgentRef("local", "br-f1")), client);
        bridge.handle(status("ses_f1", "busy"));
        assertEquals(1, bridge.stats().failedBeats());
        assertEquals("ready", admin.agent("br-f1").status());

        client.set(admin);
        bridge.flushDue();
        assertEquals(1, bridge.stats().beats(), "the held change is retried at once, interval or not");
        assertEquals("working", admin.agent("br-f1").status());
    }

    @Test
    void handle_aGivenMap_winsOverTheTitleAndNamesTheTeam() throws Exception {
        register("br-m1");
        register("br-m2");
        MutableClock clock = new MutableClock(START);
        OpencodeBridge bridge = bridge(clock, Map.of("ses_m", new AgentRef("local", "br-m1")),
                new AtomicReference<>(admin));
        bridge.handle(created("ses_m", "teams::local::agent::br-m2"));
        bridge.handle(status("ses_m", "busy"));
        assertEquals("working", admin.agent("br-m1").status());
        assertEquals("offline", admin.agent("br-m2").status());
    }

    @Test
    void fromTitle_seed001Convention_namesTeamAndAgent() {
        assertEquals(new AgentRef("alpha", "a-7"), OpencodeBridge.fromTitle("teams::alpha::agent::a-7::role::dev")
                .orElseThrow());
        assertEquals(new AgentRef("alpha", "a-7"), OpencodeBridge.fromTitle("teams::alpha::agent::a-7").orElseThrow());
        assertTrue(OpencodeBridge.fromTitle("New session - 2026-11-24").isEmpty());
        assertTrue(OpencodeBridge.fromTitle("teams::::agent::a").isEmpty());
        assertTrue(OpencodeBridge.fromTitle(null).isEmpty());
    }

    @Test
    void tail_ofALongSession_keepsTheLast2000CharactersOfItsText() {
        StringBuilder messages = new StringBuilder("[");
        for (int i = 0; i < 100; i++) {
            messages.append(i == 0 ? "" : ",").append("{'info':{'role':'user'},'parts':[{'type':'text','text':'line ")
                    .append(i).append(" ").append("x".repeat(40)).append("'},{'type':'tool','tool':'bash'}]}");
        }
        String tail = OpencodeBridge.tail(event(messages.append("]").toString()));
        assertEquals(OpencodeBridge.CONTINUATION_CHARS, tail.length());
        assertTrue(tail.endsWith("line 99 " + "x".repeat(40)), tail);
    }
}
