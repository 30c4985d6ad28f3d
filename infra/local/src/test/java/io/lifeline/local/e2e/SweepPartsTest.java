package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.local.template.PolicyGuard;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A sweep fanned out to three parts (the template's {@code SweepParts}) in Lifeline Local, through its stand-ins for
 * SQS and Lambda's event source, on a test clock: the scheduled invocation sends parts 1 and 2 to the sweep queue and
 * runs part 0; the queue delivers the others, and the one that completes the round decides it. A stale agent is marked
 * dead at the sweep one invocation would mark it at; four of five silent at once are held (the team's flag), and a
 * round a part of which never came writes nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("e2e")
class SweepPartsTest {
    private static final Instant T0 = TestStack.START;
    private static final String[] SIX = {"a1", "a2", "a3", "a4", "a5", "a6"};
    private final List<String> lines = new CopyOnWriteArrayList<>();

    @AfterEach
    void restoreLog() {
        Log.sink(null);
    }

    @Test
    void threeParts_markAStaleAgentDead_holdAMassSilence_andARoundMissingAPartWritesNothing() throws Exception {
        try (TestStack s = TestStack.builder().parameter("SweepParts", "3").parameter("SweepsPerInvocation", "1")
                .build()) {
            for (String id : SIX) {
                TestStack.ok(s.ready(id));
            }
            Log.sink(lines::add);
            // a1 stops at T0 (stale after 60 s, grace 2): a miss at the 75 s round, its death at the 90 s one.
            assertEquals(1, round(s, 75, "a2", "a3", "a4", "a5", "a6").get(0).path("missesRecorded").asInt());
            assertEquals("1", s.agentItem("a1").get("misses").n());
            List<JsonNode> decided = round(s, 90, "a2", "a3", "a4", "a5", "a6");
            assertEquals(List.of(TestStack.TEAM + "/a1"), ids(decided, "markedDead"), "a1 dead at 90 s, once");
            assertEquals("dead", s.agentItem("a1").get("status").s());
            assertEquals(T0.plusSeconds(90).toString(), decided.get(0).path("due").asText(), "the round's due time");
            // a2..a5 stop after their 90 s beat: four of the five alive silent at 165 s, so the team is held.
            decided = round(s, 165, "a6");
            assertEquals(List.of(TestStack.TEAM), ids(decided, "teamsHeld"), "the mass silence is held");
            assertNotNull(s.item("TEAM#" + TestStack.TEAM, "TEAM").get("massStaleSince"), "the team's flag");
            for (String id : List.of("a2", "a3", "a4", "a5")) {
                assertEquals("ready", s.agentItem(id).get("status").s(), id + " held, not marked");
            }
            // A round whose parts 1 and 2 are not delivered before the next round begins decides nothing, and the
            // next round counts them missing. Delivered 15 s late they do not scan: Local's gate reads a late
            // delivery as its own stall and judges nothing for one interval, so the 195 s round is skipped whole too.
            s.clock.set(T0.plusSeconds(180));
            TestStack.ok(s.heartbeat("a6", "{}"));
            assertEquals(List.of(), s.sweep(), "part 0 alone does not decide");
            assertEquals(2, s.queues.pending().size(), "parts 1 and 2 sent, not delivered");
            s.clock.set(T0.plusSeconds(195));
            TestStack.ok(s.heartbeat("a6", "{}"));
            lines.clear();
            assertEquals(List.of(), s.sweep());
            assertEquals(4, s.queues.deliverDue(), "the old round's parts and the new one's");
            List<JsonNode> logged = lines.stream().map(SweepPartsTest::parse).toList();
            assertEquals(List.of(2), missing(logged), "the 180 s round lacked two parts: " + lines);
            assertEquals(4, logged.stream().filter(l -> "skipped_late".equals(l.path("outcome").asText())).count(),
                    lines.toString());
            assertEquals(0, decided(logged).size(), "nothing decided at 195 s");
            // The next whole round decides, and counts the 195 s round's two parts missing.
            List<JsonNode> after = round(s, 210, "a6");
            assertEquals(List.of(2), missing(lines.stream().map(SweepPartsTest::parse).toList()));
            assertEquals(List.of(TestStack.TEAM), ids(after, "teamsHeld"));
            for (String action : List.of("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query")) {
                assertTrue(s.host.policies().calls().contains(new PolicyGuard.Call("SweepFunction", action,
                        "LedgerTable", true)), action + ": " + s.host.policies().calls());
            }
            assertEquals(List.of(), s.host.policies().denied());
        }
    }

    /**
     * The schedule at {@code sec} (after {@code beating} beat), then the queue's due deliveries; answers the sweep
     * lines of the rounds decided.
     */
    private List<JsonNode> round(TestStack s, int sec, String... beating) {
        s.clock.set(T0.plusSeconds(sec));
        for (String id : beating) {
            TestStack.ok(s.heartbeat(id, "{}"));
        }
        lines.clear();
        assertEquals(List.of(), s.sweep(), "part 0 does not complete a round of 3");
        assertEquals(2, s.queues.deliverDue(), "parts 1 and 2 delivered");
        List<JsonNode> decided = decided(lines.stream().map(SweepPartsTest::parse).toList());
        assertEquals(1, decided.size(), "one part decides the round: " + lines);
        return decided;
    }

    /** The sweep lines of rounds decided (one invocation's sweep line, naming the round's parts). */
    private static List<JsonNode> decided(List<JsonNode> logged) {
        return logged.stream().filter(l -> "sweep".equals(l.path("msg").asText()) && l.path("parts").asInt() == 3)
                .toList();
    }

    /** The parts missing that the rounds' beginnings counted. */
    private static List<Integer> missing(List<JsonNode> logged) {
        return logged.stream().filter(l -> l.has("partsMissing")).map(l -> l.path("partsMissing").asInt()).toList();
    }

    private static JsonNode parse(String line) {
        try {
            return Json.MAPPER.readTree(line);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> ids(List<JsonNode> lines, String field) {
        return lines.stream().flatMap(l -> {
            List<String> out = new ArrayList<>();
            l.path(field).forEach(n -> out.add(n.asText()));
            return out.stream();
        }).toList();
    }
}
