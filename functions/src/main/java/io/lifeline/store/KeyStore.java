package io.lifeline.store;

import static io.lifeline.store.Items.ms;
import static io.lifeline.store.Items.s;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Teams and their API keys. A key is stored twice, in one transaction: under its hash (for the authorizer's
 * single GetItem) and as a reference in its team's partition (to list and revoke it). Neither holds the key.
 */
public final class KeyStore {
    private static final String TEAM = "team";
    private static final String SCOPE = "scope";
    private static final String LABEL = "label";
    private static final String HASH = "hash";
    private static final String CREATED_AT = "createdAt";

    /** A key as the authorizer sees it; {@code team} is null for an operator key. */
    public record KeyInfo(String team, Scope scope, String keyId) {
    }

    /** A key as its team sees it (never the secret). */
    public record KeyRef(String keyId, Scope scope, String label, Instant createdAt) {
    }

    /** A key just made: the secret, shown this once. */
    public record NewKey(String keyId, String key, Scope scope) {
    }

    private final DynamoDbClient dynamo;
    private final String table;

    public KeyStore(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    /** Creates the team and its first admin key; refused when the team exists. */
    public NewKey createTeam(String team, Instant now) {
        return createTeam(team, Map.of(), now);
    }

    /**
     * Creates the team, with {@code settings} (team item attributes from {@link TeamStore#settingsAttributes}),
     * and its first admin key, in one transaction conditional on the team not existing (409 TEAM_EXISTS).
     */
    public NewKey createTeam(String team, Map<String, AttributeValue> settings, Instant now) {
        Map<String, AttributeValue> teamItem = new HashMap<>(settings);
        teamItem.putAll(Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.TEAM_SK), CREATED_AT, ms(now)));
        TransactWriteItem putTeam = TransactWriteItem.builder().put(Put.builder().tableName(table).item(teamItem)
                .conditionExpression("attribute_not_exists(#pk)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK)).build()).build();
        try {
            return create(team, Scope.ADMIN, "first admin key", now, putTeam);
        } catch (TransactionCanceledException e) {
            if (Transactions.failedCondition(e.cancellationReasons().get(0))) {
                throw new LifelineException(LifelineException.Kind.CONFLICT, "TEAM_EXISTS",
                        "Team '" + team + "' already exists");
            }
            throw Transactions.failure("create the team", e);
        }
    }

    /**
     * A new operator key: it belongs to no team and may only create teams. Stored like a team's key, by its
     * hash, with its reference in the {@code OPERATOR} partition instead of a team's.
     */
    public NewKey createOperatorKey(String label, Instant now) {
        try {
            return create(null, Scope.OPERATOR, label, now, null);
        } catch (TransactionCanceledException e) {
            throw Transactions.failure("create the operator key", e);
        }
    }

    public boolean teamExists(String team) {
        Map<String, AttributeValue> item = StoreFailures.call("read the team", () -> dynamo.getItem(g -> g
                .tableName(table).key(Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.TEAM_SK))))).item();
        return item != null && !item.isEmpty();
    }

    public NewKey createKey(String team, Scope scope, String label, Instant now) {
        try {
            return create(team, scope, label, now, null);
        } catch (TransactionCanceledException e) {
            throw Transactions.failure("create the key", e);
        }
    }

    /** {@code team} null: an operator key (no team on its hash item, its reference in the OPERATOR partition). */
    private NewKey create(String team, Scope scope, String label, Instant now, TransactWriteItem with) {
        String key = ApiKeys.generate();
        String hash = ApiKeys.hash(key);
        String keyId = ApiKeys.idOf(hash);
        Map<String, AttributeValue> byHash = new HashMap<>(Map.of(Keys.PK, s(Keys.apiKey(hash)), Keys.SK,
                s(Keys.KEY_SK), SCOPE, s(scope.wire()), CREATED_AT, ms(now)));
        if (team != null) {
            byHash.put(TEAM, s(team));
        }
        Map<String, AttributeValue> ref = new HashMap<>(Map.of(Keys.PK, s(team == null ? Keys.OPERATOR_PK
                : Keys.team(team)), Keys.SK, s(Keys.KEY_REF_PREFIX + keyId), SCOPE, s(scope.wire()), HASH, s(hash),
                CREATED_AT, ms(now)));
        if (label != null) {
            ref.put(LABEL, s(label));
        }
        List<TransactWriteItem> writes = new ArrayList<>();
        if (with != null) {
            writes.add(with);
        }
        writes.add(TransactWriteItem.builder().put(p -> p.tableName(table).item(byHash)).build());
        writes.add(TransactWriteItem.builder().put(p -> p.tableName(table).item(ref)).build());
        StoreFailures.call(team == null ? "create the operator key" : "create the key",
                () -> dynamo.transactWriteItems(t -> t.transactItems(writes)));
        return new NewKey(keyId, key, scope);
    }

    /** The authorizer's lookup: one eventually consistent GetItem by the key's hash. */
    public Optional<KeyInfo> find(String key) {
        String hash = ApiKeys.hash(key);
        Map<String, AttributeValue> item = StoreFailures.call("check the key", () -> dynamo.getItem(g -> g
                .tableName(table).key(Map.of(Keys.PK, s(Keys.apiKey(hash)), Keys.SK, s(Keys.KEY_SK))))).item();
        if (item == null || item.isEmpty()) {
            return Optional.empty();
        }
        // An operator key has no team (null); every other key has one.
        return Scope.fromWire(Items.str(item, SCOPE))
                .filter(scope -> (scope == Scope.OPERATOR) == (Items.str(item, TEAM) == null))
                .map(scope -> new KeyInfo(Items.str(item, TEAM), scope, ApiKeys.idOf(hash)));
    }

    public List<KeyRef> list(String team) {
        List<KeyRef> refs = new ArrayList<>();
        StoreFailures.call("list keys", () -> dynamo.queryPaginator(q -> q.tableName(table)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                .expressionAttributeValues(Map.of(":pk", s(Keys.team(team)), ":prefix", s(Keys.KEY_REF_PREFIX)))))
                .items().forEach(item -> refs.add(new KeyRef(Keys.idAfter(Keys.KEY_REF_PREFIX, Items.str(item, Keys.SK)),
                        Scope.fromWire(Items.str(item, SCOPE)).orElseThrow(), Items.str(item, LABEL),
                        Items.instant(item, CREATED_AT))));
        return refs;
    }

    /** Deletes both of a key's items; a key unknown to the team is a 404. */
    public void revoke(String team, String keyId) {
        Map<String, AttributeValue> refKey = Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.KEY_REF_PREFIX + keyId));
        Map<String, AttributeValue> ref = StoreFailures.call("read the key", () -> dynamo.getItem(g -> g
                .tableName(table).key(refKey).consistentRead(true))).item();
        if (ref == null || ref.isEmpty()) {
            throw new LifelineException(LifelineException.Kind.NOT_FOUND, "KEY_NOT_FOUND",
                    "Key '" + keyId + "' not found");
        }
        String hash = Items.str(ref, HASH);
        StoreFailures.call("revoke the key", () -> dynamo.transactWriteItems(t -> t.transactItems(
                TransactWriteItem.builder().delete(d -> d.tableName(table).key(refKey)).build(),
                TransactWriteItem.builder().delete(d -> d.tableName(table)
                        .key(Map.of(Keys.PK, s(Keys.apiKey(hash)), Keys.SK, s(Keys.KEY_SK)))).build())));
    }
}
