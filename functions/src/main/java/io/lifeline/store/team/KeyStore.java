package io.lifeline.store.team;

import static io.lifeline.store.dynamo.Items.ms;
import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.store.agent.Partitions;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import io.lifeline.store.dynamo.Transactions;
import io.lifeline.store.dynamo.Update;
import io.lifeline.support.Page;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * Teams and their API keys. A key is stored twice, in one transaction: under its hash (for the authorizer's
 * single GetItem) and as a reference in its team's partition (to list and revoke it). Neither holds the key.
 *
 * <p>The team item counts its live admin keys ({@code adminKeys}): creating an admin key adds one and revoking
 * one takes one away only while more than one is left, each in the same transaction as the key's items, so
 * two admins revoking the last two admin keys at once cannot both succeed. A team made before the counter
 * existed has none: the first admin-key change counts the team's admin keys (a consistent Query) and writes
 * the counter on condition that it is still absent, so of two such first changes one writes it and the
 * other retries against it.
 */
public final class KeyStore {
    private static final String TEAM = "team";
    private static final String SCOPE = "scope";
    private static final String LABEL = "label";
    private static final String HASH = "hash";
    private static final String CREATED_AT = "createdAt";
    /** On the team item: how many admin keys the team has. */
    static final String ADMIN_KEYS = "adminKeys";
    /** On a key reference: the operator key that minted it, when an operator did. */
    static final String MINTED_BY = "mintedBy";
    /** Tries of one admin-key change: counter absent, counter just written by another, a transaction conflict. */
    private static final int ATTEMPTS = 5;

    /** A key as the authorizer sees it; {@code team} is null for an operator key. */
    public record KeyInfo(String team, Scope scope, String keyId) {
    }

    /** A key as its team sees it (never the secret). */
    public record KeyRef(String keyId, Scope scope, String label, Instant createdAt, String mintedBy) {
    }

    /** A key just made: the secret, shown this once. */
    public record NewKey(String keyId, String key, Scope scope) {
    }

    private final DynamoDbClient dynamo;
    /** Keys and their references (ledger). */
    private final String table;
    /** The team item (live). */
    private final String live;

    public KeyStore(DynamoDbClient dynamo, Tables tables) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.live = tables.live();
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
        teamItem.putAll(Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.TEAM_SK), CREATED_AT, ms(now),
                ADMIN_KEYS, n(1)));
        TransactWriteItem putTeam = TransactWriteItem.builder().put(Put.builder().tableName(live).item(teamItem)
                .conditionExpression("attribute_not_exists(#pk)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK)).build()).build();
        try {
            return create(team, Scope.ADMIN, "first admin key", now, putTeam, null);
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
            return create(null, Scope.OPERATOR, label, now, null, null);
        } catch (TransactionCanceledException e) {
            throw Transactions.failure("create the operator key", e);
        }
    }

    public boolean teamExists(String team) {
        Map<String, AttributeValue> item = StoreFailures.call("read the team", () -> dynamo.getItem(g -> g
                .tableName(live).key(TeamItems.key(team)))).item();
        return item != null && !item.isEmpty();
    }

    /** A new key of {@code team}; an admin key also counts itself on the team item (404 when there is none). */
    public NewKey createKey(String team, Scope scope, String label, Instant now) {
        if (scope == Scope.ADMIN) {
            return addAdminKey(team, label, null, now);
        }
        try {
            return create(team, scope, label, now, null, null);
        } catch (TransactionCanceledException e) {
            throw Transactions.failure("create the key", e);
        }
    }

    /**
     * The operator's way back into a team that has lost its admin keys: a new admin key of an existing team
     * (404 TEAM_NOT_FOUND otherwise), its reference marked with the operator key's id, which the outbox turns
     * into an {@code AdminKeyMinted} event.
     */
    public NewKey mintAdminKey(String team, String label, String operatorKeyId, Instant now) {
        return addAdminKey(team, label, operatorKeyId, now);
    }

    private NewKey addAdminKey(String team, String label, String mintedBy, Instant now) {
        boolean counted = true;
        String key = ApiKeys.generate();
        for (int attempt = 1; ; attempt++) {
            Update u = new Update(live, TeamItems.key(team));
            u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
            if (mintedBy == null) {
                TeamItems.quiet(u);
            } else {
                // The fact reaches the bus through the team's live item (the ledger has no stream).
                u.set(TeamItems.MINTED, AttributeValue.fromM(Map.of("key", s(ApiKeys.idOf(ApiKeys.hash(key))),
                        "by", s(mintedBy), "at", ms(now))));
                u.set(TeamItems.OUTBOX, AttributeValue.fromBool(true));
            }
            if (counted) {
                u.condition("attribute_exists(" + u.name(ADMIN_KEYS) + ")");
                u.setExpression(ADMIN_KEYS, u.name(ADMIN_KEYS) + " + " + u.value(n(1)));
            } else {
                u.condition("attribute_not_exists(" + u.name(ADMIN_KEYS) + ")");
                u.set(ADMIN_KEYS, n(countAdminKeys(team) + 1));
            }
            try {
                return create(key, team, Scope.ADMIN, label, now, u.transactItem(), mintedBy);
            } catch (TransactionCanceledException e) {
                CancellationReason onTeam = e.cancellationReasons().get(0);
                if (attempt >= ATTEMPTS || !(Transactions.failedCondition(onTeam) || conflicted(e))) {
                    throw Transactions.failure("create the key", e);
                }
                if (Transactions.failedCondition(onTeam)) {
                    Map<String, AttributeValue> teamItem = teamItem(team, onTeam);
                    if (teamItem.isEmpty()) {
                        throw teamNotFound(team);
                    }
                    counted = teamItem.containsKey(ADMIN_KEYS);
                }
            }
        }
    }

    /** The team item as a failed condition returned it, or (when it returned none) as a consistent read. */
    private Map<String, AttributeValue> teamItem(String team, CancellationReason reason) {
        if (reason.hasItem() && !reason.item().isEmpty()) {
            return reason.item();
        }
        Map<String, AttributeValue> item = StoreFailures.call("read the team", () -> dynamo.getItem(g -> g
                .tableName(live).key(TeamItems.key(team)).consistentRead(true))).item();
        return item == null ? Map.of() : item;
    }

    /** The team's admin key references, counted with a consistent Query (the counter's first value). */
    private long countAdminKeys(String team) {
        return list(team, true).stream().filter(ref -> ref.scope() == Scope.ADMIN).count();
    }

    private static boolean conflicted(TransactionCanceledException e) {
        return e.cancellationReasons().stream().anyMatch(r -> "TransactionConflict".equals(r.code()));
    }

    private static LifelineException teamNotFound(String team) {
        return new LifelineException(LifelineException.Kind.NOT_FOUND, "TEAM_NOT_FOUND",
                "Team '" + team + "' not found");
    }

    /** {@code team} null: an operator key (no team on its hash item, its reference in the OPERATOR partition). */
    private NewKey create(String team, Scope scope, String label, Instant now, TransactWriteItem with,
                          String mintedBy) {
        return create(ApiKeys.generate(), team, scope, label, now, with, mintedBy);
    }

    private NewKey create(String key, String team, Scope scope, String label, Instant now, TransactWriteItem with,
                          String mintedBy) {
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
        if (mintedBy != null) {
            ref.put(MINTED_BY, s(mintedBy));
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
        return list(team, false);
    }

    /** A page of at most {@code limit} of the team's keys (by id) from {@code cursor} (null: the first). */
    public Page<KeyRef> page(String team, int limit, String cursor) {
        Page<Map<String, AttributeValue>> p = Partitions.page(dynamo, table, team, Keys.KEY_REF_PREFIX, "keys", null,
                limit, cursor, "list keys");
        return new Page<>(p.items().stream().map(KeyStore::keyRef).toList(), p.cursor());
    }

    private static KeyRef keyRef(Map<String, AttributeValue> item) {
        return new KeyRef(Keys.idAfter(Keys.KEY_REF_PREFIX, Items.str(item, Keys.SK)),
                Scope.fromWire(Items.str(item, SCOPE)).orElseThrow(), Items.str(item, LABEL),
                Items.instant(item, CREATED_AT), Items.str(item, MINTED_BY));
    }

    private List<KeyRef> list(String team, boolean consistent) {
        List<KeyRef> refs = new ArrayList<>();
        StoreFailures.call("list keys", () -> dynamo.queryPaginator(q -> q.tableName(table).consistentRead(consistent)
                .keyConditionExpression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                .expressionAttributeValues(Map.of(":pk", s(Keys.team(team)), ":prefix", s(Keys.KEY_REF_PREFIX)))))
                .items().forEach(item -> refs.add(keyRef(item)));
        return refs;
    }

    /**
     * Deletes both of a key's items, on condition that its reference is still there (404 KEY_NOT_FOUND, so two
     * revocations of one key count it once). An admin key also takes one from the team's counter on condition
     * that more than one is left: the last admin key is refused with 409 LAST_ADMIN_KEY.
     */
    public void revoke(String team, String keyId) {
        Map<String, AttributeValue> refKey = Map.of(Keys.PK, s(Keys.team(team)), Keys.SK, s(Keys.KEY_REF_PREFIX + keyId));
        Map<String, AttributeValue> ref = StoreFailures.call("read the key", () -> dynamo.getItem(g -> g
                .tableName(table).key(refKey).consistentRead(true))).item();
        if (ref == null || ref.isEmpty()) {
            throw keyNotFound(keyId);
        }
        String hash = Items.str(ref, HASH);
        boolean admin = Scope.fromWire(Items.str(ref, SCOPE)).orElse(null) == Scope.ADMIN;
        boolean counted = true;
        for (int attempt = 1; ; attempt++) {
            List<TransactWriteItem> writes = new ArrayList<>();
            writes.add(TransactWriteItem.builder().delete(d -> d.tableName(table).key(refKey)
                    .conditionExpression("attribute_exists(#pk)").expressionAttributeNames(Map.of("#pk", Keys.PK)))
                    .build());
            writes.add(TransactWriteItem.builder().delete(d -> d.tableName(table)
                    .key(Map.of(Keys.PK, s(Keys.apiKey(hash)), Keys.SK, s(Keys.KEY_SK)))).build());
            if (admin) {
                Update u = new Update(live, TeamItems.key(team));
                u.condition("attribute_exists(" + u.name(Keys.PK) + ")");
                TeamItems.quiet(u);
                if (counted) {
                    u.condition(u.name(ADMIN_KEYS) + " > " + u.value(n(1)));
                    u.setExpression(ADMIN_KEYS, u.name(ADMIN_KEYS) + " - " + u.value(n(1)));
                } else {
                    long live = countAdminKeys(team);
                    if (live <= 1) {
                        throw lastAdminKey(keyId);
                    }
                    u.condition("attribute_not_exists(" + u.name(ADMIN_KEYS) + ")");
                    u.set(ADMIN_KEYS, n(live - 1));
                }
                writes.add(u.transactItem());
            }
            try {
                StoreFailures.call("revoke the key", () -> dynamo.transactWriteItems(t -> t.transactItems(writes)));
                return;
            } catch (TransactionCanceledException e) {
                List<CancellationReason> reasons = e.cancellationReasons();
                if (Transactions.failedCondition(reasons.get(0))) {
                    throw keyNotFound(keyId);
                }
                boolean onTeam = admin && Transactions.failedCondition(reasons.get(2));
                if (attempt >= ATTEMPTS || !(onTeam || conflicted(e))) {
                    throw Transactions.failure("revoke the key", e);
                }
                if (onTeam) {
                    Map<String, AttributeValue> teamItem = teamItem(team, reasons.get(2));
                    if (teamItem.isEmpty()) {
                        throw teamNotFound(team);
                    }
                    if (counted && teamItem.containsKey(ADMIN_KEYS)) {
                        throw lastAdminKey(keyId);
                    }
                    counted = teamItem.containsKey(ADMIN_KEYS);
                }
            }
        }
    }

    private static LifelineException keyNotFound(String keyId) {
        return new LifelineException(LifelineException.Kind.NOT_FOUND, "KEY_NOT_FOUND", "Key '" + keyId + "' not found");
    }

    private static LifelineException lastAdminKey(String keyId) {
        return new LifelineException(LifelineException.Kind.CONFLICT, "LAST_ADMIN_KEY", "Key '" + keyId
                + "' is the team's last admin key; create another admin key first (an operator can mint one"
                + " with POST /v1/teams/{team}/admin-keys)");
    }
}
