package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import io.lifeline.agent.HostLease;
import io.lifeline.engine.Engine;
import io.lifeline.store.dynamo.Tables;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntFunction;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A fleet's live items for {@link MillionBench}, copied from what the real API wrote for one team: an agent that
 * beats alone, and 25 agents a daemon beats through one host lease (registered, joined, one batch each). Agents are
 * numbered; every block of 100 is one team's worth (in the fleet, a team of its own; in the dashboard's team, 1,000
 * blocks of one team), its first 25 hosted in one lease, the other 75 alone. Healthy agents were heard 5 s ago with
 * an hour to their deadline (seeding and sweeping a million takes minutes); stale ones were heard 120 s ago, their
 * 60 s deadline passed, on their item and, for a hosted agent, in its lease's entry.
 */
final class FleetItems {
    static final int BLOCK = 100;
    static final int HOSTED = 25;
    private static final int CHUNK = 10_000;
    private static final String HOST = "zhost";

    private final Map<String, AttributeValue> team;
    private final Map<String, AttributeValue> single;
    private final Map<String, AttributeValue> hosted;
    private final Map<String, AttributeValue> lease;
    /** The agent's entry in its team's roster, on the ledger (what the agent list reads). */
    private final Map<String, AttributeValue> roster;

    private FleetItems(Map<String, AttributeValue> team, Map<String, AttributeValue> single,
                       Map<String, AttributeValue> hosted, Map<String, AttributeValue> lease,
                       Map<String, AttributeValue> roster) {
        this.roster = roster;
        this.team = team;
        this.single = single;
        this.hosted = hosted;
        this.lease = lease;
    }

    /** Drives the API once (in a throwaway in-memory stack) and keeps the items it wrote. */
    static FleetItems sample() throws Exception {
        Engine engine = new Engine(Clock.systemUTC());
        try (MeteredStack stack = new MeteredStack(engine.client(), "fleet-sample", Map.of(), Clock.systemUTC())) {
            stack.readyAgent("zsingle");
            stack.expect(200, "POST", stack.agentPath("zsingle") + "/heartbeat", "{}");
            StringBuilder b = new StringBuilder("{\"hostId\":\"" + HOST + "\",\"heartbeats\":[");
            for (int i = 0; i < HOSTED; i++) {
                String id = String.format(Locale.ROOT, "zhosted%02d", i);
                stack.readyAgent(id);
                b.append(i == 0 ? "" : ",").append("{\"agentId\":\"").append(id).append("\",\"localBeatAgeMs\":1000}");
            }
            stack.expect(200, "POST", "/v1/teams/" + MeteredStack.TEAM + "/heartbeats", b.append("]}").toString());
            String team = "TEAM#" + MeteredStack.TEAM;
            String live = stack.tables.live();
            return new FleetItems(get(stack, live, team, "TEAM"), get(stack, live, team + "#AGENT#zsingle", "AGENT"),
                    get(stack, live, team + "#AGENT#zhosted00", "AGENT"),
                    get(stack, live, team + "#HOST#" + HOST, "HOST"),
                    get(stack, stack.tables.ledger(), team, "AGENT#zsingle"));
        }
    }

    private static Map<String, AttributeValue> get(MeteredStack stack, String table, String pk, String sk) {
        Map<String, AttributeValue> item = stack.plain.getItem(g -> g.tableName(table)
                .key(Map.of("pk", s(pk), "sk", s(sk)))).item();
        if (item == null || item.isEmpty()) {
            throw new IllegalStateException("the sample wrote no " + pk + " / " + sk);
        }
        return item;
    }

    static int teams(int n) {
        return (n + BLOCK - 1) / BLOCK;
    }

    static boolean hosted(int i) {
        return i % BLOCK < HOSTED;
    }

    /** Every 20th agent of a block (5 of 100: 2 hosted, 3 alone). */
    static boolean stale(int i) {
        return i % 20 == 0;
    }

    static String agentId(int i) {
        return String.format(Locale.ROOT, "a%07d", i);
    }

    /**
     * Writes {@code n} agents (and their roster entries on the ledger), the team items and one lease per block, all
     * healthy; the team of agent {@code i} is
     * {@code teamOf.apply(i / BLOCK)}. With {@code stale}, writes again only the agents {@link #stale} picks, stale
     * now, and every lease (its stale agents' entries old). Answers the items written.
     */
    int seed(DynamoDbClient db, Tables tables, int n, IntFunction<String> teamOf, Instant now, boolean stale)
            throws Exception {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        List<Map<String, AttributeValue>> entries = new ArrayList<>();
        int written = 0;
        String lastTeam = null;
        for (int block = 0; block * BLOCK < n; block++) {
            String t = teamOf.apply(block);
            if (!stale && !t.equals(lastTeam)) {
                Map<String, AttributeValue> item = new HashMap<>(team);
                item.put("pk", s("TEAM#" + t));
                items.add(item);
                lastTeam = t;
            }
            Map<String, AttributeValue> beats = new LinkedHashMap<>();
            Map<String, AttributeValue> answers = new LinkedHashMap<>();
            AttributeValue answer = lease.get("s").m().values().iterator().next();
            for (int i = block * BLOCK; i < Math.min(n, (block + 1) * BLOCK); i++) {
                boolean old = stale && stale(i);
                if (old || !stale) {
                    items.add(agent(t, i, now, old, "h" + block));
                }
                if (!stale) {
                    Map<String, AttributeValue> entry = new HashMap<>(roster);
                    entry.put("pk", s("TEAM#" + t));
                    entry.put("sk", s("AGENT#" + agentId(i)));
                    entries.add(entry);
                }
                if (hosted(i)) {
                    String key = HostLease.key(agentId(i));
                    beats.put(key, n(heard(now, old)));
                    answers.put(key, answer);
                }
            }
            Map<String, AttributeValue> l = new HashMap<>(lease);
            l.put("pk", s("TEAM#" + t + "#HOST#h" + block));
            l.put("a", AttributeValue.fromM(beats));
            l.put("s", AttributeValue.fromM(answers));
            l.put("at", n(heard(now, false)));
            items.add(l);
            if (items.size() >= CHUNK) {
                written += write(db, tables, items, entries);
                items = new ArrayList<>();
                entries = new ArrayList<>();
            }
        }
        return written + write(db, tables, items, entries);
    }

    private static int write(DynamoDbClient db, Tables tables, List<Map<String, AttributeValue>> items,
                             List<Map<String, AttributeValue>> entries) throws Exception {
        SweepBench.write(db, tables.live(), items);
        SweepBench.write(db, tables.ledger(), entries);
        return items.size() + entries.size();
    }

    /** {@code n} agents in the one team {@code team}: 1,000 leases of 25 for 100,000. */
    int seedTeam(DynamoDbClient db, Tables tables, String teamName, int n, Instant now) throws Exception {
        return seed(db, tables, n, b -> teamName, now, false);
    }

    private Map<String, AttributeValue> agent(String t, int i, Instant now, boolean old, String leaseName) {
        String id = agentId(i);
        Map<String, AttributeValue> item = new HashMap<>(hosted(i) ? hosted : single);
        item.put("pk", s("TEAM#" + t + "#AGENT#" + id));
        item.put("name", s(id));
        if (hosted(i)) {
            item.put("lease", s(leaseName));
        }
        long hb = heard(now, old);
        item.put("hbAt", n(hb));
        item.put("deadline", n(old ? hb + 60_000 : hb + 3_600_000));
        return item;
    }

    private static long heard(Instant now, boolean old) {
        return now.toEpochMilli() - (old ? 120_000 : 5_000);
    }

    /** A heartbeat of agent {@code i} of the fleet (team {@code prefix + block}), as the HTTP API hands it on. */
    static APIGatewayV2HTTPEvent beatEvent(String team, int i) {
        String agentId = agentId(i);
        String path = "/v1/teams/" + team + "/agents/" + agentId + "/heartbeat";
        String route = "POST /v1/teams/{team}/agents/{agentId}/heartbeat";
        return APIGatewayV2HTTPEvent.builder().withVersion("2.0").withRouteKey(route).withRawPath(path)
                .withHeaders(Map.of("content-type", "application/json"))
                .withPathParameters(Map.of("team", team, "agentId", agentId)).withBody("{}")
                .withIsBase64Encoded(false)
                .withRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder().withRouteKey(route)
                        .withRequestId("bench").withTimeEpoch(System.currentTimeMillis())
                        .withHttp(APIGatewayV2HTTPEvent.RequestContext.Http.builder().withMethod("POST")
                                .withPath(path).build())
                        .withAuthorizer(APIGatewayV2HTTPEvent.RequestContext.Authorizer.builder()
                                .withLambda(new HashMap<>(Map.of("team", team, "scope", "admin", "keyId", "bench")))
                                .build())
                        .build())
                .build();
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    private static AttributeValue n(long v) {
        return AttributeValue.fromN(Long.toString(v));
    }
}
