package io.lifeline.store.ledger;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.Agent;
import io.lifeline.agent.AgentStatus;
import io.lifeline.store.agent.AgentItems;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Update;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * What each revive execution did, written by its own steps, so {@code GET .../revivals} reads the same in
 * the cloud and in Local: {@code TEAM#<team>#AGENT#<id> / REV#<seq>}, keyed by the transition seq the
 * execution was started for.
 */
public final class RevivalStore {
    static final String PREFIX = "REV#";

    /**
     * One step of an execution: what it did ({@code initiate}, {@code check}, {@code giveUp}, {@code recordError}),
     * the restart attempt it was about (a check that asks again names the attempt it judged, as its console line
     * does), its outcome and when.
     */
    public record Step(String step, int attempt, String outcome, Instant at) {
    }

    /** One execution as recorded: {@code attempts} is how many restarts it asked for so far. */
    public record Revival(long startSeq, String executionId, Instant startedAt, String outcome, int attempts,
                          List<Step> steps) {
    }

    /**
     * A revive flow an agent is still waiting on: the agent is {@code restarting}, and the execution named
     * {@code executionId} claimed the revive of its death at {@code startSeq} (the transition before its entry into
     * restarting). {@code hostId} is the host to ask, as the flow's input carries it.
     */
    public record Pending(String team, String agentId, long startSeq, String hostId, String executionId) {
    }

    private final DynamoDbClient dynamo;
    private final String table;
    private final String live;
    private final Duration retention;

    public RevivalStore(DynamoDbClient dynamo, Tables tables, Duration retention) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.live = tables.live();
        this.retention = retention;
    }

    private static Map<String, AttributeValue> key(String team, String agentId, long startSeq) {
        return Map.of(Keys.PK, s(Keys.agentScope(team, agentId)), Keys.SK, s(PREFIX + String.format("%012d", startSeq)));
    }

    /**
     * Claims the revive of the death (or failed revive) at {@code startSeq} for one execution, before it writes
     * anything else: true for the first execution to ask, and again for the same execution when its step is
     * retried; false for any other. A null {@code executionId} (a direct call, no execution) claims nothing.
     */
    public boolean claim(String team, String agentId, long startSeq, String executionId, Instant now) {
        if (executionId == null) {
            return true;
        }
        Update u = new Update(table, key(team, agentId, startSeq));
        String id = u.name("executionId");
        String mine = u.value(s(executionId));
        u.condition("attribute_not_exists(" + id + ") OR " + id + " = " + mine);
        u.setExpression("executionId", mine);
        u.setExpression("startedAt", "if_not_exists(" + u.name("startedAt") + ", " + u.value(ms(now)) + ")");
        u.set(Keys.EXPIRES_AT, n(now.plus(retention).getEpochSecond()));
        try {
            StoreFailures.call("claim the revive", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    /**
     * Appends a step; the first step creates the record. {@code outcome} is the execution's so far and
     * {@code attempts} the restarts it has asked for (null leaves the recorded count as it is).
     */
    public void record(String team, String agentId, long startSeq, String executionId, Step step, Integer attempts,
                       String outcome) {
        Update u = new Update(table, key(team, agentId, startSeq));
        AttributeValue stepValue = AttributeValue.fromM(Map.of("step", s(step.step()), "attempt", n(step.attempt()),
                "outcome", s(step.outcome()), "at", ms(step.at())));
        u.setExpression("steps", "list_append(if_not_exists(" + u.name("steps") + ", " + u.value(AttributeValue.fromL(List.of()))
                + "), " + u.value(AttributeValue.fromL(List.of(stepValue))) + ")");
        u.setExpression("startedAt", "if_not_exists(" + u.name("startedAt") + ", " + u.value(ms(step.at())) + ")");
        if (executionId != null) {
            u.set("executionId", s(executionId));
        }
        u.set("outcome", s(outcome));
        if (attempts != null) {
            u.set("attempts", n(attempts));
        } else {
            u.setExpression("attempts", "if_not_exists(" + u.name("attempts") + ", " + u.value(n(0)) + ")");
        }
        u.set(Keys.EXPIRES_AT, n(step.at().plus(retention).getEpochSecond()));
        StoreFailures.call("record the revive step", () -> dynamo.updateItem(u.request(ReturnValue.NONE)));
    }

    /**
     * Every agent left {@code restarting} whose revive an execution has claimed, with that execution: what a
     * runtime that lost its running executions (Lifeline Local after a crash) needs to start each flow again under
     * the same name. An agent in restarting with no claimed revival record (its flow never started a step) is not
     * listed. Reads strongly consistent agent items with a filtered Scan of the live table, then each listed agent's
     * newest revival records; a start-up path, not a hot one.
     */
    public List<Pending> pending() {
        Map<String, AttributeValue> values = Map.of(":restarting", s(AgentStatus.RESTARTING.wire()),
                ":agent", s(Keys.AGENT_SK));
        List<Pending> out = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse page = StoreFailures.call("scan for agents left restarting", () -> dynamo.scan(r -> r
                    .tableName(live).consistentRead(true)
                    .filterExpression("#status = :restarting AND #sk = :agent")
                    .expressionAttributeNames(Map.of("#status", AgentItems.STATUS, "#sk", Keys.SK))
                    .expressionAttributeValues(values).exclusiveStartKey(from)));
            for (Map<String, AttributeValue> item : page.items()) {
                if (!AgentItems.isAgent(item)) {
                    continue;
                }
                Agent agent = AgentItems.toAgent(item);
                if (agent.lastTransition() == null) {
                    continue;
                }
                long startSeq = agent.lastTransition().seq() - 1;
                list(agent.team(), agent.agentId(), 10).stream()
                        .filter(rev -> rev.startSeq() == startSeq && rev.executionId() != null)
                        .findFirst()
                        .ifPresent(rev -> out.add(new Pending(agent.team(), agent.agentId(), startSeq,
                                agent.hostId(), rev.executionId())));
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }

    /** Newest first. */
    public List<Revival> list(String team, String agentId, int limit) {
        List<Revival> out = new ArrayList<>();
        StoreFailures.call("read revivals", () -> dynamo.query(q -> q.tableName(table).consistentRead(true)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                .expressionAttributeValues(Map.of(":pk", s(Keys.agentScope(team, agentId)), ":prefix", s(PREFIX)))
                .scanIndexForward(false).limit(limit))).items().forEach(item -> {
                    List<Step> steps = new ArrayList<>();
                    AttributeValue list = item.get("steps");
                    if (list != null && list.hasL()) {
                        for (AttributeValue v : list.l()) {
                            Map<String, AttributeValue> m = v.m();
                            steps.add(new Step(Items.str(m, "step"), (int) Items.num(m, "attempt", 0),
                                    Items.str(m, "outcome"), Items.instant(m, "at")));
                        }
                    }
                    out.add(new Revival(Long.parseLong(Items.str(item, Keys.SK).substring(PREFIX.length())),
                            Items.str(item, "executionId"), Items.instant(item, "startedAt"),
                            Items.str(item, "outcome"), (int) Items.num(item, "attempts", 0), steps));
                });
        return out;
    }
}
