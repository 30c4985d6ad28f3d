package io.lifeline.engine;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.DeleteTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteTableResponse;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ListTablesRequest;
import software.amazon.awssdk.services.dynamodb.model.ListTablesResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * An in-process DynamoDB. {@link #client()} is its SDK v2 {@link DynamoDbClient}. {@code new Engine(clock)} holds its
 * tables in memory only; {@link #open(Path, Clock)} keeps them in a data dir, where every write is on disk (fsynced,
 * many writers sharing one fsync) before it answers, and only a bounded cache is in memory (see {@link Durable}).
 *
 * <p>Isolation: one lock for the whole engine. Every operation (a single-item write, a transaction, a page of a
 * Query or Scan, each item of a batch) runs alone under it, so each conditional write is atomic on its item and a
 * transaction is serializable against every other write. A lock per table or per item would let more run at once;
 * this first version keeps the one lock because it is plainly correct.
 *
 * <p>Streams ({@link #streamsClient()}, {@link StreamsClient}) and time to live ({@link #expire()}, {@link Ttl}) are
 * implemented; UpdateTable changes the stream spec only.
 *
 * <p>Not implemented yet (each answers a ValidationException naming it): local secondary indexes, PartiQL, backups,
 * the legacy parameters (Expected, AttributesToGet, KeyConditions, QueryFilter, ScanFilter, AttributeUpdates,
 * ConditionalOperator) and every other operation.
 */
public final class Engine implements AutoCloseable {
    final ReentrantLock lock = new ReentrantLock();
    final Map<String, Table> tables;
    final Clock clock;
    private final Reads reads = new Reads(this);
    private final Batches batches = new Batches(this);
    final Streams streams = new Streams(this);
    /** The data dir (null: in memory only). */
    private Durable durable;
    private boolean closed;

    /** An engine in memory, with no tables; {@code clock} stamps table creation times and ages transaction tokens. */
    public Engine(Clock clock) {
        this.clock = clock;
        this.tables = new HashMap<>();
    }

    private Engine(Clock clock, Durable durable) {
        this.clock = clock;
        this.durable = durable;
        this.tables = durable.load(streams);
    }

    /**
     * An engine over the data dir {@code dir} (created if missing), with the tables it holds. Only one process may
     * have a dir open; a dir of another format, or one DynamoDB Local wrote, is refused with an
     * IllegalStateException that says what to do. {@link #close()} checkpoints and lets the dir go.
     */
    public static Engine open(Path dir, Clock clock) {
        return open(dir, clock, Durable.WAL_LIMIT);
    }

    /** {@link #open(Path, Clock)} checkpointing whenever the log passes {@code walLimit} bytes (tests make it small). */
    static Engine open(Path dir, Clock clock, long walLimit) {
        return new Engine(clock, Durable.open(dir, walLimit));
    }

    /** Checkpoints the data dir and lets it go (nothing to do in memory). The engine answers nothing after. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (durable != null && !closed) {
                durable.close(tables);
            }
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    /** How many times the log was fsynced (0 in memory): writes per fsync shows the group commit at work. */
    public long fsyncs() {
        return durable == null ? 0 : durable.fsyncs();
    }

    /** How many checkpoints the data dir has had since it was opened (0 in memory). */
    long checkpoints() {
        return durable == null ? 0 : durable.checkpoints();
    }

    /** The longest a checkpoint has paused the engine, in milliseconds (0 in memory). */
    long longestCheckpointMillis() {
        return durable == null ? 0 : durable.longestCheckpoint() / 1_000_000;
    }

    /** Takes the engine's lock (every operation runs under it). */
    void acquire() {
        lock.lock();
        if (closed) {
            lock.unlock();
            throw new IllegalStateException("The engine is closed");
        }
    }

    /**
     * Lets the lock go after an operation; with a data dir, first seals what it changed as one log record, and
     * afterwards waits until that record (and anything it read) is on disk, so no answer rests on a write that a
     * crash could still lose.
     */
    void release() {
        if (durable == null) {
            lock.unlock();
            return;
        }
        long seq;
        try {
            seq = durable.seal(tables);
        } finally {
            lock.unlock();
        }
        durable.await(seq);
    }

    /** The engine as the SDK's client: every DynamoDbClient method, those not implemented refused by name. */
    public DynamoDbClient client() {
        return EngineClient.of(this, reads, batches);
    }

    /** The engine's DynamoDB Streams as the SDK's client (see {@link StreamsClient}). */
    public DynamoDbStreamsClient streamsClient() {
        return new StreamsClient(this);
    }

    /**
     * Caps the records each stream keeps (default 100,000): beyond it the oldest are trimmed, as records older than 24
     * hours are, so a stream nobody reads holds bounded memory. A reader behind the cap meets TrimmedDataAccessException.
     */
    public void maxStreamRecords(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max stream records must be at least 1: " + max);
        }
        lock.lock();
        try {
            streams.maxRecords = max;
        } finally {
            lock.unlock();
        }
    }

    /**
     * One TTL pass: deletes every item whose TTL attribute (on a table with TTL enabled) is a Number of epoch seconds
     * before the clock's now and no more than five years before it (see {@link Ttl}); answers how many it deleted.
     */
    public int expire() {
        return Ttl.expire(this);
    }

    /** Runs {@link #expire()} every {@code period} on a daemon thread until the answer is closed. */
    public Schedule expireEvery(Duration period) {
        return Ttl.every(this, period);
    }

    /** A schedule the engine started: closing it stops it. */
    public interface Schedule extends AutoCloseable {
        @Override
        void close();
    }

    Table table(String name) {
        Table t = tables.get(name);
        if (t == null) {
            throw Errors.notFound("Requested resource not found");
        }
        return t;
    }

    /** CreateTable: the key schema and global secondary indexes; billing and throughput are accepted and ignored. */
    public CreateTableResponse createTable(CreateTableRequest r) {
        if (r.hasLocalSecondaryIndexes()) {
            throw Errors.unsupported("local secondary indexes");
        }
        Streams.check(r.streamSpecification());
        Map<String, String> types = new LinkedHashMap<>();
        for (AttributeDefinition d : r.attributeDefinitions()) {
            types.put(d.attributeName(), d.attributeTypeAsString());
        }
        String[] key = keys(r.keySchema(), types);
        HashSet<String> used = new HashSet<>(List.of(key[0]));
        if (key[1] != null) {
            used.add(key[1]);
        }
        for (GlobalSecondaryIndex g : r.globalSecondaryIndexes()) {
            String[] ik = keys(g.keySchema(), types);
            used.add(ik[0]);
            if (ik[1] != null) {
                used.add(ik[1]);
            }
        }
        if (!used.equals(types.keySet())) {
            throw Errors.validation("One or more parameter values were invalid: Number of attributes in KeySchema "
                    + "does not exactly match number of attributes defined in AttributeDefinitions");
        }
        acquire();
        try {
            if (tables.containsKey(r.tableName())) {
                throw Errors.inUse("Table already exists: " + r.tableName());
            }
            long id = durable == null ? 0 : durable.newId();
            Table t = new Table(r.tableName(), key[0], key[1], types, clock.millis(), storage(id));
            t.id = id;
            for (GlobalSecondaryIndex g : r.globalSecondaryIndexes()) {
                String[] ik = keys(g.keySchema(), types);
                String projection = g.projection() == null ? "KEYS_ONLY" : g.projection().projectionTypeAsString();
                t.indexes.put(g.indexName(), new Table.Index(g.indexName(), ik[0], ik[1], projection,
                        new HashSet<>(g.projection() == null ? List.of() : g.projection().nonKeyAttributes()),
                        t.storage.apply(g.indexName())));
            }
            t.log = durable;
            streams.created(t, r.streamSpecification());
            if (durable != null) {
                durable.created(t); // after the stream: the definition logged holds the stream spec
            }
            tables.put(t.name, t);
            return CreateTableResponse.builder().tableDescription(Describe.of(t, "ACTIVE")).build();
        } finally {
            release();
        }
    }

    /** Where a new table keeps its entries: tree maps in memory, or maps of the data dir's store. */
    private Function<String, Sorted> storage(long id) {
        if (durable == null) {
            return part -> new Sorted.InMemory();
        }
        Durable d = durable;
        return part -> d.sorted(id, part);
    }

    private static String[] keys(List<KeySchemaElement> schema, Map<String, String> types) {
        String hash = null;
        String range = null;
        for (KeySchemaElement k : schema) {
            if (!types.containsKey(k.attributeName())) {
                throw Errors.validation("One or more parameter values were invalid: Some index key attributes are not "
                        + "defined in AttributeDefinitions. Keys: [" + k.attributeName() + "], AttributeDefinitions: "
                        + types.keySet());
            }
            if (k.keyType() == KeyType.HASH) {
                hash = k.attributeName();
            } else {
                range = k.attributeName();
            }
        }
        if (hash == null) {
            throw Errors.validation("1 validation error detected: the key schema has no HASH key");
        }
        return new String[] {hash, range};
    }

    /** DeleteTable: the table and its items are gone at once. */
    public DeleteTableResponse deleteTable(DeleteTableRequest r) {
        acquire();
        try {
            Table t = tables.get(r.tableName());
            if (t == null) {
                throw Errors.notFound("Requested resource not found: Table: " + r.tableName() + " not found");
            }
            tables.remove(r.tableName());
            streams.deleted(t);
            if (durable != null) {
                durable.dropped(t);
            }
            return DeleteTableResponse.builder().tableDescription(Describe.of(t, "DELETING")).build();
        } finally {
            release();
        }
    }

    /** DescribeTable. */
    public DescribeTableResponse describeTable(DescribeTableRequest r) {
        acquire();
        try {
            Table t = tables.get(r.tableName());
            if (t == null) {
                throw Errors.notFound("Requested resource not found: Table: " + r.tableName() + " not found");
            }
            TableDescription d = Describe.of(t, "ACTIVE");
            return DescribeTableResponse.builder().table(d).build();
        } finally {
            release();
        }
    }

    /** ListTables, in name order, paged by ExclusiveStartTableName and Limit. */
    public ListTablesResponse listTables(ListTablesRequest r) {
        acquire();
        try {
            List<String> names = new ArrayList<>(tables.keySet());
            names.sort(null);
            String start = r.exclusiveStartTableName();
            List<String> page = names.stream().filter(n -> start == null || n.compareTo(start) > 0).toList();
            int limit = r.limit() == null ? 100 : r.limit();
            ListTablesResponse.Builder b = ListTablesResponse.builder();
            if (page.size() > limit) {
                page = page.subList(0, limit);
                b.lastEvaluatedTableName(page.get(limit - 1));
            }
            return b.tableNames(page).build();
        } finally {
            release();
        }
    }

    /** PutItem. */
    public PutItemResponse putItem(PutItemRequest r) {
        String rv = returnValues(r.returnValuesAsString(), "ALL_OLD");
        Legacy.refuse(r.hasExpected(), "Expected", r.conditionalOperator() != null);
        acquire();
        try {
            Table t = table(r.tableName());
            Write w = Write.of(t, new Write.Spec(Write.Kind.PUT, r.item(), null, r.conditionExpression(),
                    r.expressionAttributeNames(), r.expressionAttributeValues(), allOld(r.returnValuesOnConditionCheckFailure())));
            Units units = new Units(t.name, r.returnConsumedCapacity(), false);
            Map<String, AttributeValue> old = single(w, units);
            return PutItemResponse.builder().attributes(w.returned(rv, old, null)).consumedCapacity(units.result())
                    .build();
        } finally {
            release();
        }
    }

    /** UpdateItem. */
    public UpdateItemResponse updateItem(UpdateItemRequest r) {
        String rv = returnValues(r.returnValuesAsString(), "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW");
        Legacy.refuse(r.hasExpected() || r.hasAttributeUpdates(), "Expected or AttributeUpdates",
                r.conditionalOperator() != null);
        acquire();
        try {
            Table t = table(r.tableName());
            Write w = Write.of(t, new Write.Spec(Write.Kind.UPDATE, r.key(), r.updateExpression(),
                    r.conditionExpression(), r.expressionAttributeNames(), r.expressionAttributeValues(),
                    allOld(r.returnValuesOnConditionCheckFailure())));
            Units units = new Units(t.name, r.returnConsumedCapacity(), false);
            Map<String, AttributeValue> old = single(w, units);
            return UpdateItemResponse.builder().attributes(w.returned(rv, old, t.get(w.key)))
                    .consumedCapacity(units.result()).build();
        } finally {
            release();
        }
    }

    /** DeleteItem. */
    public DeleteItemResponse deleteItem(DeleteItemRequest r) {
        String rv = returnValues(r.returnValuesAsString(), "ALL_OLD");
        Legacy.refuse(r.hasExpected(), "Expected", r.conditionalOperator() != null);
        acquire();
        try {
            Table t = table(r.tableName());
            Write w = Write.of(t, new Write.Spec(Write.Kind.DELETE, r.key(), null, r.conditionExpression(),
                    r.expressionAttributeNames(), r.expressionAttributeValues(),
                    allOld(r.returnValuesOnConditionCheckFailure())));
            Units units = new Units(t.name, r.returnConsumedCapacity(), false);
            Map<String, AttributeValue> old = single(w, units);
            return DeleteItemResponse.builder().attributes(w.returned(rv, old, null)).consumedCapacity(units.result())
                    .build();
        } finally {
            release();
        }
    }

    /** Runs one write under the lock: the condition, then the write; answers the item as it was. */
    private Map<String, AttributeValue> single(Write w, Units units) {
        Map<String, AttributeValue> old = w.table.get(w.key);
        if (!w.holds(old)) {
            units.write(w.table, old, null, 1);
            throw Errors.conditionFailed(w.returnOldOnFailure ? old : null);
        }
        Map<String, AttributeValue> now = w.after(old);
        units.write(w.table, old, now, 1);
        w.table.write(w.key, old, now);
        return old;
    }

    static boolean allOld(ReturnValuesOnConditionCheckFailure f) {
        return f == ReturnValuesOnConditionCheckFailure.ALL_OLD;
    }

    private static String returnValues(String given, String... allowed) {
        if (given == null || given.equals(ReturnValue.NONE.toString())) {
            return "NONE";
        }
        for (String a : allowed) {
            if (a.equals(given)) {
                return given;
            }
        }
        throw Errors.validation("Return values set to invalid value");
    }

    /** GetItem, strongly or eventually consistent (the engine has one copy: both read the latest write). */
    public GetItemResponse getItem(GetItemRequest r) {
        Legacy.refuse(r.hasAttributesToGet(), "AttributesToGet", false);
        acquire();
        try {
            Table t = table(r.tableName());
            return reads.get(t, r);
        } finally {
            release();
        }
    }
}
