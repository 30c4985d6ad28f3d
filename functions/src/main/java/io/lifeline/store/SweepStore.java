package io.lifeline.store;

import static io.lifeline.store.Items.s;

import io.lifeline.agent.AgentStatus;
import io.lifeline.agent.TeamSettings;
import io.lifeline.sweep.SweepPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * The sweep's read: one parallel, eventually consistent Scan that returns only alive agents and team items,
 * projected to the few attributes the sweep needs. A stale read is safe: every write the sweep makes is
 * conditional on the heartbeat count it saw.
 */
public final class SweepStore {
    private static final String PROJECTION = String.join(", ", "#pk", "#sk", "#status", "#hbAt", "#deadline",
            "#misses", "#grace", "#beats", "#paused", "#leader", "#spT", "#spM", "#massStale");

    /** What one scan saw. {@code consumedReadUnits} is as DynamoDB reported it (0 where it does not). */
    public record Snapshot(List<SweepPlan.Observed> agents, Map<String, TeamSettings> teams,
                           Set<String> teamsWithMassStaleFlag, int itemsScanned, double consumedReadUnits) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final int segments;
    private final ExecutorService pool;

    public SweepStore(DynamoDbClient dynamo, String table, int segments) {
        this.dynamo = dynamo;
        this.table = table;
        this.segments = segments;
        this.pool = Executors.newFixedThreadPool(segments, r -> {
            Thread t = new Thread(r, "sweep-scan");
            t.setDaemon(true);
            return t;
        });
    }

    public Snapshot scan() {
        List<Future<Snapshot>> parts = new ArrayList<>();
        for (int segment = 0; segment < segments; segment++) {
            int seg = segment;
            parts.add(pool.submit(() -> scanSegment(seg)));
        }
        List<SweepPlan.Observed> agents = new ArrayList<>();
        Map<String, TeamSettings> teams = new HashMap<>();
        Set<String> flagged = new HashSet<>();
        int scanned = 0;
        double units = 0;
        for (Future<Snapshot> part : parts) {
            Snapshot s;
            try {
                s = part.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("sweep scan interrupted", e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
            agents.addAll(s.agents());
            teams.putAll(s.teams());
            flagged.addAll(s.teamsWithMassStaleFlag());
            scanned += s.itemsScanned();
            units += s.consumedReadUnits();
        }
        return new Snapshot(agents, teams, flagged, scanned, units);
    }

    private Snapshot scanSegment(int segment) {
        Map<String, String> names = new HashMap<>();
        names.put("#pk", Keys.PK);
        names.put("#sk", Keys.SK);
        names.put("#status", AgentItems.STATUS);
        names.put("#hbAt", AgentItems.HEARTBEAT_AT);
        names.put("#deadline", AgentItems.DEADLINE);
        names.put("#misses", AgentItems.MISSES);
        names.put("#grace", AgentItems.GRACE);
        names.put("#beats", AgentItems.BEATS);
        names.put("#paused", AgentItems.PAUSED_UNTIL);
        names.put("#leader", TeamItems.LEADER);
        names.put("#spT", TeamItems.SP_THRESHOLD);
        names.put("#spM", TeamItems.SP_MIN_ALIVE);
        names.put("#massStale", TeamItems.MASS_STALE_SINCE);
        Map<String, AttributeValue> values = Map.of(":agent", s(Keys.AGENT_PREFIX), ":team", s(Keys.TEAM_SK),
                ":ready", s(AgentStatus.READY.wire()), ":working", s(AgentStatus.WORKING.wire()));
        List<SweepPlan.Observed> agents = new ArrayList<>();
        Map<String, TeamSettings> teams = new HashMap<>();
        Set<String> flagged = new HashSet<>();
        int scanned = 0;
        double units = 0;
        Map<String, AttributeValue> start = null;
        do {
            ScanRequest request = ScanRequest.builder().tableName(table).segment(segment).totalSegments(segments)
                    .filterExpression("(begins_with(#sk, :agent) AND #status IN (:ready, :working)) OR #sk = :team")
                    .projectionExpression(PROJECTION)
                    .expressionAttributeNames(names).expressionAttributeValues(values)
                    .returnConsumedCapacity("TOTAL")
                    .exclusiveStartKey(start).build();
            ScanResponse page = StoreFailures.call("scan for the sweep", () -> dynamo.scan(request));
            scanned += page.scannedCount();
            if (page.consumedCapacity() != null && page.consumedCapacity().capacityUnits() != null) {
                units += page.consumedCapacity().capacityUnits();
            }
            for (Map<String, AttributeValue> item : page.items()) {
                if (TeamItems.isTeam(item)) {
                    TeamSettings settings = TeamItems.toSettings(item);
                    teams.put(settings.team(), settings);
                    if (item.containsKey(TeamItems.MASS_STALE_SINCE)) {
                        flagged.add(settings.team());
                    }
                } else if (AgentItems.isAgent(item)) {
                    agents.add(observed(item));
                }
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return new Snapshot(agents, teams, flagged, scanned, units);
    }

    private static SweepPlan.Observed observed(Map<String, AttributeValue> item) {
        return new SweepPlan.Observed(Keys.idAfter("TEAM#", Items.str(item, Keys.PK)),
                Keys.idAfter(Keys.AGENT_PREFIX, Items.str(item, Keys.SK)),
                AgentStatus.fromWire(Items.str(item, AgentItems.STATUS)).orElseThrow(),
                Items.instant(item, AgentItems.HEARTBEAT_AT), Items.instant(item, AgentItems.DEADLINE),
                (int) Items.num(item, AgentItems.MISSES, 0), (int) Items.num(item, AgentItems.GRACE, 1),
                Items.num(item, AgentItems.BEATS, 0), Items.instant(item, AgentItems.PAUSED_UNTIL));
    }
}
