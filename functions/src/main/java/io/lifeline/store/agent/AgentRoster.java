package io.lifeline.store.agent;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.store.dynamo.BatchReads;
import io.lifeline.store.dynamo.Cursors;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * A team's agents read a page at a time (docs/api.md, "List agents"): what a page costs follows its size, never the
 * team's. Three reads, each answered as {@link AgentStore#read} answers one agent (the item and its host lease's beat
 * of it, for the application layer to judge):
 * <ul>
 *   <li>{@link #page} without a status: the team's roster on the ledger ({@link Keys#rosterKey}, in id order) a page
 *   at a time, then those agents' live items by BatchGetItem, then the leases they name (each once);</li>
 *   <li>{@link #page} with a status: the ledger's sparse {@code TeamStatus} index of the roster entries (keys only; its
 *   partition is the team and status, {@link RosterIndex}), newest in that status first, so only agents in that status
 *   are read;</li>
 *   <li>{@link #changedSince}: the same index, each status's entries newer than a time: the agents whose status
 *   changed since then, which a dashboard asks every few seconds instead of the whole team.</li>
 * </ul>
 * The outbox moves a roster entry's status as it records each transition, so the index follows the live items by the
 * outbox's lag (a second or two), and is itself eventually consistent: an agent whose entry still names a status it has
 * left is left out of that status's page, and one that entered a status shows in it once the outbox has passed.
 */
public final class AgentRoster {
    private static final String LIST = "agents";
    /** Roster queries for one page, at most: tombstones of deleted agents are skipped, and cannot stall a page. */
    private static final int MAX_ROSTER_QUERIES = 8;

    private final DynamoDbClient dynamo;
    private final String table;
    private final String ledger;

    public AgentRoster(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.live();
        this.ledger = tables.ledger();
    }

    /**
     * A page of at most {@code limit} of the team's agents, from {@code cursor} (null: the first page), each with its
     * host lease's beat of it: every agent in id order, or with {@code status}, only those in it, newest in it first.
     * A cursor issued for another team, list or status is refused 400 {@code INVALID_QUERY}.
     */
    public Page<AgentStore.Read> page(String team, AgentStatus status, int limit, String cursor) {
        return status == null ? byId(team, limit, cursor) : byStatus(team, status, limit, cursor);
    }

    /**
     * The roster a page at a time. Each Query asks one entry more than the page still needs, so a page that ends the
     * list says so (no cursor) and a walk never ends on an empty page.
     */
    private Page<AgentStore.Read> byId(String team, int limit, String cursor) {
        Map<String, AttributeValue> start = cursor == null ? null
                : Keys.rosterKey(team, Cursors.decode(cursor, LIST, team, null, 1).get(0));
        List<String> ids = new ArrayList<>();
        String last = null;
        for (int q = 0; q < MAX_ROSTER_QUERIES && ids.size() <= limit && (q == 0 || start != null); q++) {
            QueryRequest request = QueryRequest.builder().tableName(ledger)
                    .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                    .expressionAttributeValues(Map.of(":pk", s(Keys.team(team)), ":prefix", s(Keys.AGENT_PREFIX)))
                    .exclusiveStartKey(start).limit(limit + 1 - ids.size()).build();
            QueryResponse r = StoreFailures.call("list agents", () -> dynamo.query(request));
            for (Map<String, AttributeValue> entry : r.items()) {
                last = Keys.idAfter(Keys.AGENT_PREFIX, Items.str(entry, Keys.SK));
                if (!entry.containsKey(AgentStore.RETIRED_AT)) {
                    ids.add(last);
                }
            }
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        }
        String next = null;
        if (ids.size() > limit) {
            ids = ids.subList(0, limit);
            next = Cursors.encode(LIST, team, null, ids.get(limit - 1));
        } else if (start != null) {
            next = Cursors.encode(LIST, team, null, last); // deleted agents' tombstones filled the queries
        }
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        ids.forEach(id -> keys.add(AgentItems.key(team, id)));
        return new Page<>(reads(team, keys, null), next);
    }

    /** A status's index entries a page at a time, one more asked than the page holds (as {@link #byId}). */
    private Page<AgentStore.Read> byStatus(String team, AgentStatus status, int limit, String cursor) {
        List<String> at = cursor == null ? null : Cursors.decode(cursor, LIST, team, status.wire(), 2);
        Map<String, AttributeValue> start = at == null ? null
                : indexKey(team, status, Cursors.number(at.get(0)), at.get(1));
        QueryResponse r = StoreFailures.call("list agents", () -> dynamo.query(statusQuery(team, status, null)
                .exclusiveStartKey(start).limit(limit + 1).build()));
        List<Map<String, AttributeValue>> entries = r.items();
        Map<String, AttributeValue> after = null;
        if (entries.size() > limit) {
            entries = entries.subList(0, limit);
            after = entries.get(limit - 1);
        } else if (r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty()) {
            after = r.lastEvaluatedKey();
        }
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        entries.forEach(entry -> keys.add(liveKey(team, entry)));
        String next = after == null ? null : Cursors.encode(LIST, team, status.wire(),
                after.get(RosterIndex.STATUS_SINCE).n(), Keys.idAfter(Keys.AGENT_PREFIX, after.get(Keys.SK).s()));
        return new Page<>(reads(team, keys, status), next);
    }

    /**
     * The team's agents whose status changed after {@code since} (entered the status they are in), newest change
     * first, at most {@code limit}; {@code truncated} when more changed than that (the caller reads the list again).
     * One Query of the status index per status: with nothing changed, six reads of an empty range.
     */
    public Changes changedSince(String team, Instant since, int limit) {
        List<Map<String, AttributeValue>> entries = new ArrayList<>();
        boolean truncated = false;
        for (AgentStatus status : AgentStatus.values()) {
            // One more than the answer holds: more than that changed only if some status has more.
            QueryResponse r = StoreFailures.call("list changed agents", () -> dynamo.query(
                    statusQuery(team, status, since).limit(limit + 1).build()));
            entries.addAll(r.items());
        }
        entries.sort(Comparator.comparing((Map<String, AttributeValue> e) ->
                Long.parseLong(e.get(RosterIndex.STATUS_SINCE).n())).reversed());
        if (entries.size() > limit) {
            truncated = true;
            entries = entries.subList(0, limit);
        }
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (Map<String, AttributeValue> entry : entries) {
            keys.add(liveKey(team, entry));
        }
        return new Changes(reads(team, keys, null), truncated);
    }

    /** What {@link #changedSince} read: the changed agents, and whether more changed than it answers. */
    public record Changes(List<AgentStore.Read> agents, boolean truncated) {
        public Changes {
            agents = List.copyOf(agents);
        }
    }

    /** The index's entries of the team's agents in {@code status}, newest first; only those after {@code since}. */
    private QueryRequest.Builder statusQuery(String team, AgentStatus status, Instant since) {
        Map<String, String> names = new HashMap<>(Map.of("#k", RosterIndex.STATUS_KEY));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":k", RosterIndex.statusKey(team, status)));
        String condition = "#k = :k";
        if (since != null) {
            names.put("#at", RosterIndex.STATUS_SINCE);
            values.put(":since", n(since.toEpochMilli()));
            condition += " AND #at > :since";
        }
        return QueryRequest.builder().tableName(ledger).indexName(RosterIndex.NAME).keyConditionExpression(condition)
                .expressionAttributeNames(names).expressionAttributeValues(values).scanIndexForward(false);
    }

    /** The live item's key of a roster entry ({@code TEAM#<team> / AGENT#<id>}). */
    private static Map<String, AttributeValue> liveKey(String team, Map<String, AttributeValue> entry) {
        return AgentItems.key(team, Keys.idAfter(Keys.AGENT_PREFIX, Items.str(entry, Keys.SK)));
    }

    private static Map<String, AttributeValue> indexKey(String team, AgentStatus status, long since, String agentId) {
        Map<String, AttributeValue> key = new HashMap<>(Keys.rosterKey(team, agentId));
        key.put(RosterIndex.STATUS_KEY, RosterIndex.statusKey(team, status));
        key.put(RosterIndex.STATUS_SINCE, n(since));
        return key;
    }

    /**
     * The agents at {@code keys}, in that order, each with its host lease's beat of it: the items by BatchGetItem, then
     * the leases they name, each once. An agent gone meanwhile is left out, and so, with {@code status}, is one no
     * longer in it.
     */
    private List<AgentStore.Read> reads(String team, List<Map<String, AttributeValue>> keys, AgentStatus status) {
        Map<String, Map<String, AttributeValue>> byPk = new HashMap<>();
        for (Map<String, AttributeValue> item : BatchReads.get(dynamo, table, keys, k -> k, "list agents")) {
            byPk.put(Items.str(item, Keys.PK), item);
        }
        Map<String, Map<String, AttributeValue>> leaseKeys = new LinkedHashMap<>();
        for (Map<String, AttributeValue> item : byPk.values()) {
            String hostId = Items.str(item, AgentItems.LEASE);
            if (hostId != null) {
                leaseKeys.putIfAbsent(hostId, HostLeaseStore.key(team, hostId));
            }
        }
        Map<String, Map<String, AttributeValue>> leases = new HashMap<>();
        if (!leaseKeys.isEmpty()) {
            for (Map<String, AttributeValue> lease : BatchReads.get(dynamo, table, new ArrayList<>(leaseKeys.values()),
                    k -> k, "list agents")) {
                leases.put(HostLeaseStore.hostId(lease), lease);
            }
        }
        List<AgentStore.Read> out = new ArrayList<>();
        for (Map<String, AttributeValue> key : keys) {
            Map<String, AttributeValue> item = byPk.get(key.get(Keys.PK).s());
            if (item == null) {
                continue;
            }
            Agent agent = AgentItems.toAgent(item);
            if (status != null && agent.status() != status) {
                continue;
            }
            String hostId = Items.str(item, AgentItems.LEASE);
            Instant leaseBeat = hostId == null ? null : HostLeaseStore.beatOf(leases.get(hostId), agent.agentId());
            out.add(new AgentStore.Read(agent, leaseBeat, Items.instant(item, AgentItems.LAST_MISS_AT)));
        }
        return out;
    }
}
