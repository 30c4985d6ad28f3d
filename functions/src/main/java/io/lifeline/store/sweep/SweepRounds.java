package io.lifeline.store.sweep;

import static io.lifeline.store.dynamo.Items.n;
import static io.lifeline.store.dynamo.Items.s;

import io.lifeline.agent.SweepCensus;
import io.lifeline.store.dynamo.Items;
import io.lifeline.store.dynamo.Keys;
import io.lifeline.store.dynamo.StoreFailures;
import io.lifeline.store.dynamo.Tables;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * A sweep fanned out over several invocations (a round): what each part ships to the round, and who decides. A round is
 * the items under {@code SWEEP#ROUND#<ms of its instant>} on the ledger table, kept an hour (TTL): each part's chunks
 * ({@code PART#<part>#<chunk>}, each some of its census's team counters and some of its items as one gzip'd binary
 * payload ({@link SweepChunks}), the first also its totals and its chunk count, written last), and the
 * head ({@code ROUND}) that counts the parts done (a string set, added to once per part: a redelivered part is not
 * counted twice) and names the one that decides (a conditional claim). On the ledger, not the live table: the sweep's
 * Scan reads every item of the live table (its filter drops them only after they are read and billed) and its stream
 * feeds the outbox, so an hour of rounds there would be read by every sweep; the ledger has no stream and no Scan on
 * a hot path, and its TTL deletes them for free.
 */
public final class SweepRounds {
    static final String PK_PREFIX = "SWEEP#ROUND#";
    static final String HEAD = "ROUND";
    /** The fleet's one pointer to the last round begun: its instant and its parts. */
    static final String LAST_PK = "SWEEP#ROUNDS";
    static final String LAST_SK = "LAST";
    /** A chunk's payload at most, compressed: under DynamoDB's 400 KB item with room for the keys and totals. */
    static final int CHUNK_BYTES = 300_000;
    static final Duration KEEP = Duration.ofHours(1);
    /** A chunk's payload: its counters and items, gzip'd ({@link SweepChunks}). */
    private static final String PAYLOAD = "z";
    private static final String CHUNKS = "chunks";
    private static final String SCANNED = "scanned";
    private static final String UNITS = "units";
    private static final String DONE = "done";
    private static final String OF = "of";
    private static final String DECIDED = "decidedAt";
    private static final String ROUND = "round";

    /** What a part ships of its items: every item it read that its census's counters do not say (kept as read). */
    public static final class Shipment {
        private final List<Map<String, AttributeValue>> items = new ArrayList<>();

        synchronized void addAll(List<Map<String, AttributeValue>> more) {
            items.addAll(more);
        }

        /** How many items it ships. */
        public synchronized int size() {
            return items.size();
        }

        /**
         * Its estimated size in bytes as DynamoDB attribute maps (names and values): what its chunks would cost in
         * write units uncompressed.
         */
        public synchronized long bytes() {
            return items.stream().mapToLong(SweepRounds::size).sum();
        }
    }

    /** One part as the round reads it back: its counters by team and what its Scan read. */
    public record Shipped(int part, Map<String, SweepCensus.Counts> counts, int itemsScanned, double readUnits) {
    }

    private final DynamoDbClient dynamo;
    private final String table;

    private final int chunkBytes;

    public SweepRounds(DynamoDbClient dynamo, Tables tables) {
        this(dynamo, tables, CHUNK_BYTES);
    }

    /** With chunks of at most {@code chunkBytes} compressed: a test's small chunks, to ship a part in many. */
    public SweepRounds(DynamoDbClient dynamo, Tables tables, int chunkBytes) {
        this.dynamo = dynamo;
        this.table = tables.ledger();
        this.chunkBytes = chunkBytes;
    }

    /**
     * Records that a round at {@code round} of {@code of} parts begins; answers how many parts the round begun before
     * it lacked when it was not decided (0: it was, or there was none), read from its head.
     */
    public int begin(Instant round, int of) {
        UpdateItemResponse r = StoreFailures.call("begin a sweep round", () -> dynamo.updateItem(u -> u.tableName(table)
                .key(Map.of(Keys.PK, s(LAST_PK), Keys.SK, s(LAST_SK)))
                .updateExpression("SET #r = :r, #of = :of")
                .expressionAttributeNames(Map.of("#r", ROUND, "#of", OF))
                .expressionAttributeValues(Map.of(":r", n(round.toEpochMilli()), ":of", n(of)))
                .returnValues(ReturnValue.UPDATED_OLD)));
        Long before = r.hasAttributes() ? Items.num(r.attributes(), ROUND) : null;
        if (before == null || before == round.toEpochMilli()) {
            return 0;
        }
        int parts = (int) Items.num(r.attributes(), OF, 0);
        Map<String, AttributeValue> head = StoreFailures.call("read a sweep round", () -> dynamo.getItem(g -> g
                .tableName(table).key(key(Instant.ofEpochMilli(before), HEAD)).consistentRead(true))).item();
        if (head != null && head.containsKey(DECIDED)) {
            return 0;
        }
        int done = head == null || !head.containsKey(DONE) ? 0 : head.get(DONE).ss().size();
        return Math.max(0, parts - done);
    }

    /** Whether {@code round} is the last round begun (a part of an older one is superseded: it does not scan). */
    public boolean current(Instant round) {
        Map<String, AttributeValue> last = StoreFailures.call("read the last sweep round", () -> dynamo.getItem(g -> g
                .tableName(table).key(Map.of(Keys.PK, s(LAST_PK), Keys.SK, s(LAST_SK))).consistentRead(true))).item();
        return last != null && Items.num(last, ROUND, 0) == round.toEpochMilli();
    }

    /**
     * Ships part {@code part}'s counters, totals and items to the round: its chunks (each one gzip'd payload under
     * {@link #CHUNK_BYTES} compressed, {@link SweepChunks}: the team counters first, then the items), the first (with
     * the totals and the chunk count) last, each written only if absent, so a part delivered twice keeps what it
     * shipped first. Answers what the chunks cost.
     */
    public Sent ship(Instant round, int part, Map<String, SweepCensus.Counts> counts, SweepStore.Totals totals,
                     Shipment shipment) {
        Map<String, AttributeValue> teams = new HashMap<>();
        counts.forEach((team, c) -> teams.put(team, SweepRoundCodec.team(c)));
        List<byte[]> chunks = SweepChunks.pack(teams, shipment.items, chunkBytes);
        long bytes = 0;
        long units = 0;
        for (int c = chunks.size() - 1; c >= 0; c--) {
            Map<String, AttributeValue> item = new HashMap<>(key(round, partSk(part, c)));
            item.put(PAYLOAD, AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(chunks.get(c))));
            item.put(Keys.EXPIRES_AT, n(round.plus(KEEP).getEpochSecond()));
            if (c == 0) {
                item.put(CHUNKS, n(chunks.size()));
                item.put(SCANNED, n(totals.itemsScanned()));
                item.put(UNITS, AttributeValue.fromN(Double.toString(totals.consumedReadUnits())));
            }
            put(item);
            long size = size(item);
            bytes += size;
            units += (size + 1023) / 1024;
        }
        return new Sent(chunks.size(), bytes, units);
    }

    /** What a part's chunks cost: how many, their bytes as DynamoDB sizes an item, their write units. */
    public record Sent(int chunks, long bytes, long writeUnits) {
    }

    private void put(Map<String, AttributeValue> item) {
        try {
            StoreFailures.call("ship a sweep part", () -> dynamo.putItem(p -> p.tableName(table).item(item)
                    .conditionExpression("attribute_not_exists(#pk)").expressionAttributeNames(Map.of("#pk", Keys.PK))));
        } catch (ConditionalCheckFailedException e) {
            // Shipped before by this part's first delivery: what it shipped stands.
        }
    }

    /**
     * Counts part {@code part} done (once, however often it is delivered); true when this call completed the set of
     * {@code of} and claimed the round's decision, which is then this caller's alone.
     */
    public boolean done(Instant round, int part, int of) {
        AttributeValue mine = AttributeValue.fromSs(List.of(Integer.toString(part)));
        UpdateItemResponse r;
        try {
            r = StoreFailures.call("count a sweep part done", () -> dynamo.updateItem(u -> u.tableName(table)
                    .key(key(round, HEAD))
                    .updateExpression("ADD #done :p SET #of = :of, #exp = :exp")
                    .conditionExpression("attribute_not_exists(#done) OR NOT contains(#done, :part)")
                    .expressionAttributeNames(Map.of("#done", DONE, "#of", OF, "#exp", Keys.EXPIRES_AT))
                    .expressionAttributeValues(Map.of(":p", mine, ":part", s(Integer.toString(part)), ":of", n(of),
                            ":exp", n(round.plus(KEEP).getEpochSecond())))
                    .returnValues(ReturnValue.ALL_NEW)));
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
        if (r.attributes().get(DONE).ss().size() < of) {
            return false;
        }
        try {
            StoreFailures.call("claim a sweep round", () -> dynamo.updateItem(u -> u.tableName(table)
                    .key(key(round, HEAD)).updateExpression("SET #d = :d")
                    .conditionExpression("attribute_not_exists(#d)")
                    .expressionAttributeNames(Map.of("#d", DECIDED))
                    .expressionAttributeValues(Map.of(":d", n(round.toEpochMilli())))));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    /**
     * Reads every part's shipment back (strongly consistent), handing its items to {@code sink} as pages; answers
     * each part's counters and totals. A part whose chunks are not all there is left out (the caller compares).
     */
    public List<Shipped> collect(Instant round, SweepStore.Sink sink) {
        Map<Integer, Map<String, AttributeValue>> heads = new HashMap<>();
        Map<Integer, List<Map<String, AttributeValue>>> chunks = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryRequest q = QueryRequest.builder().tableName(table).consistentRead(true)
                    .keyConditionExpression("#pk = :pk AND begins_with(#sk, :part)")
                    .expressionAttributeNames(Map.of("#pk", Keys.PK, "#sk", Keys.SK))
                    .expressionAttributeValues(Map.of(":pk", s(pk(round)), ":part", s("PART#")))
                    .exclusiveStartKey(start).build();
            QueryResponse page = StoreFailures.call("read a sweep round", () -> dynamo.query(q));
            for (Map<String, AttributeValue> item : page.items()) {
                int part = Integer.parseInt(Items.str(item, Keys.SK).split("#")[1]);
                if (item.containsKey(CHUNKS)) {
                    heads.put(part, item);
                }
                chunks.computeIfAbsent(part, k -> new ArrayList<>()).add(item);
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        List<Shipped> out = new ArrayList<>();
        heads.forEach((part, head) -> {
            List<Map<String, AttributeValue>> mine = chunks.get(part);
            if (mine.size() != Items.num(head, CHUNKS, 0)) {
                return;
            }
            Map<String, SweepCensus.Counts> counts = new HashMap<>();
            for (Map<String, AttributeValue> chunk : mine) {
                SweepChunks.Contents read = SweepChunks.read(chunk.get(PAYLOAD).b().asByteArrayUnsafe());
                counts.putAll(SweepRoundCodec.counts(AttributeValue.fromM(read.counts())));
                sink.page(SweepPages.read(read.items(), 0, 0));
            }
            out.add(new Shipped(part, counts, (int) Items.num(head, SCANNED, 0),
                    Double.parseDouble(head.get(UNITS).n())));
        });
        return out;
    }

    /** An item's size as DynamoDB counts it, near enough: names and values, a few bytes for each nesting. */
    static long size(Map<String, AttributeValue> item) {
        long bytes = 3;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            bytes += utf8(e.getKey()) + size(e.getValue());
        }
        return bytes;
    }

    private static long size(AttributeValue v) {
        if (v.s() != null) {
            return utf8(v.s());
        } else if (v.n() != null) {
            return v.n().length() + 1;
        } else if (v.hasM()) {
            return size(v.m());
        } else if (v.hasL()) {
            return 3 + v.l().stream().mapToLong(SweepRounds::size).sum() + v.l().size();
        } else if (v.b() != null) {
            return v.b().asByteArrayUnsafe().length;
        } else if (v.hasSs()) {
            return v.ss().stream().mapToLong(SweepRounds::utf8).sum() + 3;
        }
        return 1;
    }

    private static long utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String pk(Instant round) {
        return PK_PREFIX + round.toEpochMilli();
    }

    private static String partSk(int part, int chunk) {
        return "PART#" + part + "#" + chunk;
    }

    private static Map<String, AttributeValue> key(Instant round, String sk) {
        return Map.of(Keys.PK, s(pk(round)), Keys.SK, s(sk));
    }
}
