package io.lifeline.local.contract.heartbeats;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.api.KeyCache;
import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.http.LocalGateway;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;

/**
 * A flood of junk keys on the heartbeat Function URL costs the flooder, never a real agent. Through Lifeline Local's
 * gateway (the Function URL's event, its {@code sourceIp} the client's address, the real heartbeat handler and its
 * key cache over the engine), with the test clock moved 60 s a round for 20 minutes, four key-cache periods of
 * 300 s: each round, {@value #SPREAD_SOURCES} source addresses send one well-formed junk key each and one heavy source
 * sends {@value #HEAVY_PER_ROUND}, then twelve real agents beat, each from its own host address but one, which sits
 * behind the heavy source's address (a NAT it shares with the flooder). Every real beat is taken (0 refused) across
 * every cache expiry; the heavy source is answered 503 past its budget and costs at most that many reads a period,
 * the spread sources each stay within theirs. A round's junk (1,100 keys) is past the budget the cache had before,
 * 1,000 a period per environment: on that code this test refused 192 of the 252 real beats, every agent's from the
 * first expiry of its key on.
 */
@Tag("contract")
class HeartbeatUrlFloodTest {
    static final String TEAM = TestStack.TEAM;
    static final int ROUNDS = 20;
    static final Duration ROUND = Duration.ofSeconds(60);
    static final int SPREAD_SOURCES = 100;
    static final int HEAVY_PER_ROUND = 1000;
    static final String HEAVY = "198.51.100.66";
    static final int AGENTS = 12;

    /** Counts the key look-ups: GetItems of a key's hash item. */
    static final class KeyReads implements ExecutionInterceptor {
        final AtomicInteger reads = new AtomicInteger();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof GetItemRequest g && g.key().values().stream()
                    .map(AttributeValue::s).anyMatch(s -> s != null && s.startsWith("KEY#"))) {
                reads.incrementAndGet();
            }
        }
    }

    record Agent(String id, String key, String address) {
    }

    @Test
    @Timeout(600)
    void junkFromManySourcesAndOneHeavySource_whileAgentsBeatAcrossCacheExpiries_refusesNoRealBeat()
            throws Exception {
        KeyReads keyReads = new KeyReads();
        AtomicInteger logLines = new AtomicInteger();
        Log.sink(line -> logLines.incrementAndGet()); // a line per refusal: counted, not printed
        try (TestStack stack = TestStack.builder().interceptor(keyReads).build()) {
            String base = LocalGateway.urlPath(LifelineLocal.HEARTBEAT_URL_FUNCTION);
            List<String> keys = List.of(stack.key(TEAM, Scope.AGENT), stack.key(TEAM, Scope.AGENT),
                    stack.key(TEAM, Scope.AGENT));
            List<Agent> agents = new ArrayList<>();
            for (int i = 0; i < AGENTS; i++) {
                String id = TestStack.newId("flood");
                ok(stack.ready(id));
                agents.add(new Agent(id, keys.get(i % keys.size()), i == AGENTS - 1 ? HEAVY : "192.0.2." + (i + 1)));
            }
            Map<Integer, Integer> junkAnswers = new TreeMap<>();
            Map<String, Integer> refusedBeats = new TreeMap<>();
            int junkSent = 0;
            int beatsSent = 0;
            int heavyReads = 0;
            // The agents were beating before the flood began: their keys are known.
            beatsSent += beat(stack, base, agents, refusedBeats);
            for (int round = 0; round < ROUNDS; round++) {
                stack.clock.advance(ROUND);
                for (int s = 0; s < SPREAD_SOURCES; s++) {
                    junkAnswers.merge(junk(stack, base, "10.9." + (s >> 8) + "." + (s & 255)), 1, Integer::sum);
                    junkSent++;
                }
                int before = keyReads.reads.get();
                for (int j = 0; j < HEAVY_PER_ROUND; j++) {
                    junkAnswers.merge(junk(stack, base, HEAVY), 1, Integer::sum);
                    junkSent++;
                }
                heavyReads += keyReads.reads.get() - before;
                beatsSent += beat(stack, base, agents, refusedBeats);
            }
            int refused = refusedBeats.values().stream().mapToInt(Integer::intValue).sum();
            System.out.println("heartbeat URL flood: junk requests sent " + junkSent + " (answers " + junkAnswers
                    + "), real beats sent " + beatsSent + ", real beats refused " + refused + " " + refusedBeats
                    + ", key look-ups " + keyReads.reads.get() + " (the heavy source's " + heavyReads + "), log lines "
                    + logLines.get());
            assertEquals(0, refused, "every real beat was taken: " + refusedBeats);
            assertEquals(AGENTS * (ROUNDS + 1), beatsSent);
            assertEquals(ROUNDS * (SPREAD_SOURCES + HEAVY_PER_ROUND), junkSent);
            int periods = (int) (ROUNDS * ROUND.toSeconds() / 300) + 1;
            assertTrue(heavyReads <= periods * KeyCache.MAX_UNKNOWN_PER_SOURCE,
                    "the heavy source cost at most its budget a period: " + heavyReads);
            assertTrue(junkAnswers.getOrDefault(503, 0) >= ROUNDS * HEAVY_PER_ROUND - heavyReads,
                    "the heavy source was answered busy past its budget: " + junkAnswers);
            assertEquals(junkSent, junkAnswers.getOrDefault(401, 0) + junkAnswers.getOrDefault(503, 0),
                    "junk is refused, never served: " + junkAnswers);
            for (Agent a : agents) {
                assertTrue(stack.agentView(a.id()).path("alive").asBoolean(), a.id());
            }
        } finally {
            Log.sink(null);
        }
    }

    /** Every agent beats once through the URL from its address; refusals counted by status and code. */
    private static int beat(TestStack stack, String base, List<Agent> agents, Map<String, Integer> refused) {
        for (Agent a : agents) {
            LocalGateway.Response r = stack.gateway.handle("POST", base + "/v1/teams/" + TEAM + "/agents/" + a.id()
                    + "/heartbeat", null, Map.of("Authorization", List.of("Bearer " + a.key()),
                    "Content-Type", List.of("application/json")), "{}", a.address());
            if (r.status() != 200) {
                refused.merge(r.status() + " " + code(r.body()) + " from " + a.address(), 1, Integer::sum);
            }
        }
        return agents.size();
    }

    private static int junk(TestStack stack, String base, String address) {
        String junk = "ll_" + (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "").substring(0, 43);
        return stack.gateway.handle("POST", base + "/v1/teams/" + TEAM + "/agents/someone/heartbeat", null,
                Map.of("Authorization", List.of("Bearer " + junk), "Content-Type", List.of("application/json")), "{}",
                address).status();
    }

    private static String code(String body) {
        try {
            return Json.parse(body).path("code").asText();
        } catch (Exception e) {
            return body;
        }
    }
}
