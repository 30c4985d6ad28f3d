package io.lifeline.local.soak;

import static io.lifeline.local.stack.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.auth.Scope;
import io.lifeline.local.aws.asl.Execution;
import io.lifeline.local.stack.Team;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A burst across a fleet of single-agent teams, all dying in one alert window (docs/alerts-noise.md), on Lifeline
 * Local: every death's AgentStatusChanged is on the bus and its revive flow has started; the alert window's items
 * stay small and none takes more than a few writes; the digest stays far under EventBridge's 256 KB, and every team
 * logs its own view of it. Figures (largest item and its size by DynamoDB's rules, writes per item, the digest's
 * size) are printed and written to target/reliability/fleet-burst.txt. Minutes long at 2,000 teams, so tagged soak:
 * {@code mvn -B -ntp test -Psoak -pl core,functions,infra/local -Dtest=FleetBurstTest
 * -Dsurefire.failIfNoSpecifiedTests=false} ({@code -Dlifeline.burst.teams=5000} for another size).
 */
@Tag("soak")
class FleetBurstTest {
    private static final int TEAMS = Integer.getInteger("lifeline.burst.teams", 2000);
    private static final TestStack.Opened STACKS = new TestStack.Opened();

    @AfterAll
    static void stop() {
        STACKS.closeAll();
    }

    /** Counts the writes of the functions' DynamoDB client per item (pk and sk). */
    static final class WritesPerItem implements ExecutionInterceptor {
        final Map<String, AtomicInteger> writes = new ConcurrentHashMap<>();
        volatile boolean on;

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (!on) {
                return;
            }
            SdkRequest r = context.request();
            if (r instanceof UpdateItemRequest u) {
                count(u.key());
            } else if (r instanceof PutItemRequest p) {
                count(p.item());
            } else if (r instanceof BatchWriteItemRequest b) {
                b.requestItems().values().forEach(l -> l.forEach(w -> {
                    if (w.putRequest() != null) {
                        count(w.putRequest().item());
                    }
                }));
            } else if (r instanceof TransactWriteItemsRequest t) {
                t.transactItems().forEach(i -> {
                    if (i.update() != null) {
                        count(i.update().key());
                    } else if (i.put() != null) {
                        count(i.put().item());
                    }
                });
            }
        }

        private void count(Map<String, AttributeValue> item) {
            writes.computeIfAbsent(item.get("pk").s() + " / " + item.get("sk").s(), k -> new AtomicInteger())
                    .incrementAndGet();
        }
    }

    /** An item's size as DynamoDB bills and limits it: each attribute's name and value (docs: item sizes). */
    static long itemSize(Map<String, AttributeValue> item) {
        long size = 0;
        for (Map.Entry<String, AttributeValue> a : item.entrySet()) {
            size += a.getKey().getBytes(StandardCharsets.UTF_8).length + valueSize(a.getValue());
        }
        return size;
    }

    static long valueSize(AttributeValue v) {
        if (v.s() != null) {
            return v.s().getBytes(StandardCharsets.UTF_8).length;
        }
        if (v.n() != null) {
            String digits = v.n().replace("-", "").replace(".", "").replaceAll("^0+", "");
            return (digits.length() + 1) / 2 + 1;
        }
        if (v.bool() != null || Boolean.TRUE.equals(v.nul())) {
            return 1;
        }
        if (v.b() != null) {
            return v.b().asByteArray().length;
        }
        if (v.hasL()) {
            long size = 3;
            for (AttributeValue e : v.l()) {
                size += valueSize(e) + 1;
            }
            return size;
        }
        if (v.hasM()) {
            long size = 3;
            for (Map.Entry<String, AttributeValue> e : v.m().entrySet()) {
                size += e.getKey().getBytes(StandardCharsets.UTF_8).length + valueSize(e.getValue()) + 1;
            }
            return size;
        }
        if (v.hasSs()) {
            return v.ss().stream().mapToLong(x -> x.getBytes(StandardCharsets.UTF_8).length).sum();
        }
        if (v.hasNs()) {
            return v.ns().stream().mapToLong(x -> x.length() / 2 + 2).sum();
        }
        throw new IllegalArgumentException("an attribute value of no known type: " + v);
    }

    @Test
    @Timeout(1800)
    void aBurstAcrossTwoThousandSingleAgentTeams_everyDeathPublishedAndRevived_itemsAndDigestBounded()
            throws Exception {
        WritesPerItem writes = new WritesPerItem();
        TestStack s = STACKS.open(TestStack.builder().interceptor(writes)
                .parameter("FleetSelfPreservationMinAlive", "1000000"));
        long t0 = System.nanoTime();
        List<Team> teams = new ArrayList<>();
        for (int i = 0; i < TEAMS; i++) {
            String name = String.format("team-%05d", i);
            String key = s.key(name, Scope.ADMIN);
            String agent = name + "-agent";
            ok(s.send("register", key, Map.of("team", name), null, "{\"agentId\":\"" + agent + "\",\"name\":\""
                    + agent + "\",\"role\":\"worker\",\"hostId\":\"" + name + "-host\"}"));
            ok(s.send("join", key, Map.of("team", name, "agentId", agent), null, null));
            teams.add(new Team(name, key, List.of(agent)));
        }
        s.pump.drain();
        long setUp = System.nanoTime();

        // Every agent dies within one second, all in one window.
        writes.on = true;
        s.clock.advance(Duration.ofSeconds(1));
        for (Team t : teams) {
            ok(s.send("fail", t.key(), Map.of("team", t.name(), "agentId", t.agents().get(0)), null,
                    "{\"reason\":\"oom\"}"));
        }
        s.pump.drain();
        long deaths = System.nanoTime();
        s.clock.advance(Duration.ofMinutes(2));
        int steps = s.stepFunctions.runDue();
        s.pump.drain();
        writes.on = false;
        long digested = System.nanoTime();

        // Every death on the bus, once; every revive flow started.
        Set<String> dead = new HashSet<>();
        s.bus.delivered().stream().filter(d -> d.detailType().equals("AgentStatusChanged")
                && d.event().path("detail").path("to").asText().equals("dead"))
                .forEach(d -> assertTrue(dead.add(d.event().path("detail").path("agentId").asText()), "twice"));
        assertEquals(TEAMS, dead.size(), "every death's AgentStatusChanged on the bus");
        Set<String> revived = new HashSet<>();
        for (Execution e : s.stepFunctions.executions()) {
            if (e.input().hasNonNull("agentId")) {
                revived.add(e.input().path("agentId").asText());
            }
        }
        assertEquals(dead, revived, "every death's revive flow started");
        assertEquals(List.of(), s.allItems().stream().filter(i -> i.get("pk").s().equals("OUTBOX#PARKED")).toList());

        // The digest: one, bounded.
        List<JsonNode> digests = s.bus.delivered().stream().filter(d -> d.detailType().equals("AlertDigest"))
                .map(d -> d.event().path("detail")).toList();
        assertEquals(1, digests.size());
        JsonNode digest = digests.get(0);
        int digestBytes = Json.write(digest).getBytes(StandardCharsets.UTF_8).length;
        assertEquals(TEAMS, digest.path("deaths").asInt());
        assertEquals(TEAMS, digest.path("teams").asInt());
        assertEquals(TEAMS, digest.path("hosts").asInt());
        assertTrue(digest.path("byTeam").size() <= 10 && digest.path("byHost").size() <= 10, digest::toString);
        assertTrue(digestBytes < 16 * 1024, "the digest " + digestBytes + " bytes");
        // Every team logs its own view (one item each), reachable through its events route.
        long views = s.allItems().stream().filter(i -> i.get("pk").s().matches(".*#EVENTS(#[0-9]+)?")
                && "AlertDigest".equals(i.get("type") == null ? null : i.get("type").s())
                && !i.get("pk").s().contains("#*#")).count();
        assertEquals(TEAMS, views, "one view of the digest per team");
        Team last = teams.get(TEAMS - 1);
        JsonNode view = ok(s.send("events", last.key(), Map.of("team", last.name()), Map.of("type", "AlertDigest"),
                null)).body().path("events").path(0).path("detail");
        assertEquals(1, view.path("deaths").asInt(), view::toString);

        // The items the burst wrote: the largest, by DynamoDB's rules, and the most written.
        List<Map<String, AttributeValue>> window = s.allItems().stream()
                .filter(i -> i.get("pk").s().startsWith("ALERTS#WINDOW#")).toList();
        Map<String, AttributeValue> largestWindowItem = window.stream()
                .max(Comparator.comparingLong(FleetBurstTest::itemSize)).orElseThrow();
        Map<String, AttributeValue> largest = s.allItems().stream().filter(i -> writes.writes.containsKey(
                i.get("pk").s() + " / " + i.get("sk").s())).max(Comparator.comparingLong(FleetBurstTest::itemSize))
                .orElseThrow();
        Map.Entry<String, AtomicInteger> mostWritten = writes.writes.entrySet().stream()
                .max(Comparator.comparingInt(e -> e.getValue().get())).orElseThrow();
        int headWrites = writes.writes.entrySet().stream().filter(e -> e.getKey().startsWith("ALERTS#WINDOW#")
                && e.getKey().endsWith(" / WINDOW")).mapToInt(e -> e.getValue().get()).sum();
        int maxShardWrites = writes.writes.entrySet().stream().filter(e -> e.getKey().contains(" / S#"))
                .mapToInt(e -> e.getValue().get()).max().orElse(0);
        long largestWindowSize = itemSize(largestWindowItem);
        assertTrue(largestWindowSize < 1024, "alert window items stay small: " + largestWindowSize);
        // The head: the threshold's deaths and the first past it, the digest's mark, and at most one refused count per
        // publisher worker (8) before its container remembers the window past its threshold; never one per death.
        assertTrue(headWrites <= 2 + 1 + 8 * 2, "the head's writes: " + headWrites);

        String figures = String.join("\n",
                "fleet burst on Lifeline Local: " + TEAMS + " single-agent teams (each on its own host), every agent"
                        + " dead in one alert window",
                "  set-up " + millis(t0, setUp) + " ms; deaths through the outbox and revive starts "
                        + millis(setUp, deaths) + " ms; digest flow (" + steps + " steps) " + millis(deaths, digested)
                        + " ms",
                "  AgentStatusChanged to dead on the bus: " + dead.size() + "; revive flows started: " + revived.size()
                        + "; records parked: 0",
                "  alert window items: " + window.size() + "; largest " + key(largestWindowItem) + " "
                        + largestWindowSize + " bytes",
                "  largest item the burst wrote (both tables): " + key(largest) + " " + itemSize(largest) + " bytes",
                "  writes per item: most " + mostWritten.getValue().get() + " (" + mostWritten.getKey()
                        + "); the window's head " + headWrites + "; a totals shard at most " + maxShardWrites,
                "  the digest's detail: " + digestBytes + " bytes (EventBridge's entry limit: 262,144); team views: "
                        + views);
        System.out.println(figures);
        Path out = Path.of("target", "reliability");
        Files.createDirectories(out);
        Files.writeString(out.resolve("fleet-burst-" + TEAMS + ".txt"), figures + "\n");
    }

    private static long millis(long from, long to) {
        return Duration.ofNanos(to - from).toMillis();
    }

    private static String key(Map<String, AttributeValue> item) {
        return item.get("pk").s() + " / " + item.get("sk").s();
    }
}
