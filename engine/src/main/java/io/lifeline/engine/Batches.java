package io.lifeline.engine;

import io.lifeline.engine.expr.Documents;
import io.lifeline.engine.expr.Names;
import io.lifeline.engine.expr.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.IdempotentParameterMismatchException;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * TransactWriteItems (up to 100 actions, all or none), BatchWriteItem (up to 25 puts and deletes) and BatchGetItem
 * (up to 100 keys), as <a href=
 * "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html">TransactWriteItems</a>,
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html">BatchWriteItem</a>
 * and <a href="https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html">BatchGetItem</a>
 * define them. A transaction runs whole under the engine's lock, so no other write sees it half done and it never
 * meets a conflicting one (no TransactionConflict reason arises). A ClientRequestToken makes a transaction
 * idempotent for 10 minutes, as on DynamoDB.
 */
final class Batches {
    /** BatchGetItem answers at most 16 MB; the keys past it come back as UnprocessedKeys. */
    private static final long MAX_BATCH_GET = 16L * 1024 * 1024;
    private static final long TOKEN_MILLIS = Duration.ofMinutes(10).toMillis();
    private final Engine engine;
    private final Map<String, Object[]> tokens = new HashMap<>();

    Batches(Engine engine) {
        this.engine = engine;
    }

    TransactWriteItemsResponse transactWrite(TransactWriteItemsRequest r, long now) {
        List<TransactWriteItem> items = r.transactItems();
        if (items.isEmpty() || items.size() > 100) {
            throw Errors.validation("1 validation error detected: Value at 'transactItems' failed to satisfy "
                    + "constraint: Member must have length less than or equal to 100 and greater than or equal to 1");
        }
        String token = r.clientRequestToken();
        TransactWriteItemsResponse replayed = replayed(token, items, now);
        if (replayed != null) {
            return replayed;
        }
        List<Write> writes = plans(items);
        List<Map<String, AttributeValue>> olds = new ArrayList<>();
        List<Map<String, AttributeValue>> news = new ArrayList<>();
        List<CancellationReason> reasons = new ArrayList<>();
        boolean failed = false;
        for (Write w : writes) {
            Map<String, AttributeValue> old = w.table.get(w.key);
            olds.add(old);
            CancellationReason.Builder reason = CancellationReason.builder().code("None");
            if (!w.holds(old)) {
                failed = true;
                reason.code("ConditionalCheckFailed").message("The conditional request failed");
                if (w.returnOldOnFailure && old != null) {
                    reason.item(old);
                }
                news.add(null);
            } else {
                try {
                    news.add(w.after(old));
                } catch (DynamoDbException e) {
                    failed = true;
                    reason.code("ValidationError").message(e.awsErrorDetails().errorMessage());
                    news.add(null);
                }
            }
            reasons.add(reason.build());
        }
        if (failed) {
            throw Errors.canceled(reasons);
        }
        Map<String, Units> units = new LinkedHashMap<>();
        for (int i = 0; i < writes.size(); i++) {
            Write w = writes.get(i);
            units.computeIfAbsent(w.table.name, n -> new Units(n, r.returnConsumedCapacity(), false))
                    .write(w.table, olds.get(i), w.kind == Write.Kind.CHECK ? olds.get(i) : news.get(i), 2);
            if (w.kind != Write.Kind.CHECK) {
                w.table.write(w.key, olds.get(i), news.get(i));
            }
        }
        TransactWriteItemsResponse.Builder b = TransactWriteItemsResponse.builder();
        List<ConsumedCapacity> consumed = consumed(units);
        if (consumed != null) {
            b.consumedCapacity(consumed);
        }
        TransactWriteItemsResponse response = b.build();
        if (token != null) {
            tokens.put(token, new Object[] {items, response, now});
        }
        return response;
    }

    /**
     * The answer a transaction with this client token had within the last ten minutes (null: none, or no token); the
     * same token with other items is IdempotentParameterMismatchException.
     */
    private TransactWriteItemsResponse replayed(String token, List<TransactWriteItem> items, long now) {
        if (token != null) {
            Object[] seen = tokens.get(token);
            if (seen != null && now - (Long) seen[2] < TOKEN_MILLIS) {
                if (!seen[0].equals(items)) {
                    throw (IdempotentParameterMismatchException) IdempotentParameterMismatchException.builder()
                            .message("Request has the same ClientRequestToken as a previous request but differs")
                            .statusCode(400).awsErrorDetails(AwsErrorDetails.builder()
                                    .errorCode("IdempotentParameterMismatchException").build()).build();
                }
                return (TransactWriteItemsResponse) seen[1];
            }
        }
        return null;
    }

    /** The transaction's writes, planned: refused when two touch one item or their puts pass 4 MB. */
    private List<Write> plans(List<TransactWriteItem> items) {
        List<Write> writes = new ArrayList<>();
        Set<String> seenKeys = new HashSet<>();
        for (TransactWriteItem i : items) {
            Write w = plan(i);
            if (!seenKeys.add(w.table.name + "\u0000" + w.table.partition(w.key) + w.table.position(w.key))) {
                throw Errors.validation("Transaction request cannot include multiple operations on one item");
            }
            writes.add(w);
        }
        long size = 0;
        for (TransactWriteItem i : items) {
            size += i.put() != null ? Values.itemSize(i.put().item()) : 0;
        }
        if (size > 4L * 1024 * 1024) {
            throw Errors.validation("Transaction request cannot be larger than 4 MB");
        }
        return writes;
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static List<ConsumedCapacity> consumed(Map<String, Units> units) {
        List<ConsumedCapacity> out = new ArrayList<>();
        for (Units u : units.values()) {
            if (u.wanted()) {
                out.add(u.result());
            }
        }
        return out.isEmpty() ? null : out;
    }

    private Write plan(TransactWriteItem i) {
        if (i.conditionCheck() != null) {
            var c = i.conditionCheck();
            return Write.of(engine.table(c.tableName()), new Write.Spec(Write.Kind.CHECK, c.key(), null,
                    c.conditionExpression(), c.expressionAttributeNames(), c.expressionAttributeValues(),
                    Engine.allOld(c.returnValuesOnConditionCheckFailure())));
        }
        if (i.put() != null) {
            var p = i.put();
            return Write.of(engine.table(p.tableName()), new Write.Spec(Write.Kind.PUT, p.item(), null,
                    p.conditionExpression(), p.expressionAttributeNames(), p.expressionAttributeValues(),
                    Engine.allOld(p.returnValuesOnConditionCheckFailure())));
        }
        if (i.update() != null) {
            var u = i.update();
            return Write.of(engine.table(u.tableName()), new Write.Spec(Write.Kind.UPDATE, u.key(),
                    u.updateExpression(), u.conditionExpression(), u.expressionAttributeNames(),
                    u.expressionAttributeValues(), Engine.allOld(u.returnValuesOnConditionCheckFailure())));
        }
        if (i.delete() != null) {
            var d = i.delete();
            return Write.of(engine.table(d.tableName()), new Write.Spec(Write.Kind.DELETE, d.key(), null,
                    d.conditionExpression(), d.expressionAttributeNames(), d.expressionAttributeValues(),
                    Engine.allOld(d.returnValuesOnConditionCheckFailure())));
        }
        throw Errors.validation("TransactItems can only contain one of Check, Put, Update or Delete");
    }

    BatchWriteItemResponse batchWrite(BatchWriteItemRequest r) {
        int n = r.requestItems().values().stream().mapToInt(List::size).sum();
        if (n == 0 || n > 25) {
            throw Errors.validation(n == 0 ? "1 validation error detected: Value at 'requestItems' failed to satisfy "
                    + "constraint: Member must have length greater than or equal to 1"
                    : "Too many items requested for the BatchWriteItem call");
        }
        List<Write> writes = new ArrayList<>();
        Set<String> seenKeys = new HashSet<>();
        for (Map.Entry<String, List<WriteRequest>> e : r.requestItems().entrySet()) {
            Table t = engine.table(e.getKey());
            for (WriteRequest w : e.getValue()) {
                Write plan = w.putRequest() != null
                        ? Write.of(t, new Write.Spec(Write.Kind.PUT, w.putRequest().item(), null, null, null, null, false))
                        : Write.of(t, new Write.Spec(Write.Kind.DELETE, w.deleteRequest().key(), null, null, null, null,
                        false));
                if (!seenKeys.add(t.name + "\u0000" + t.partition(plan.key) + t.position(plan.key))) {
                    throw Errors.validation("Provided list of item keys contains duplicates");
                }
                writes.add(plan);
            }
        }
        Map<String, Units> units = new LinkedHashMap<>();
        for (Write w : writes) {
            Map<String, AttributeValue> old = w.table.get(w.key);
            Map<String, AttributeValue> now = w.after(old);
            units.computeIfAbsent(w.table.name, name -> new Units(name, r.returnConsumedCapacity(), false))
                    .write(w.table, old, now, 1);
            w.table.write(w.key, old, now);
        }
        BatchWriteItemResponse.Builder b = BatchWriteItemResponse.builder().unprocessedItems(Map.of());
        List<ConsumedCapacity> consumed = consumed(units);
        return (consumed == null ? b : b.consumedCapacity(consumed)).build();
    }

    BatchGetItemResponse batchGet(BatchGetItemRequest r) {
        int n = r.requestItems().values().stream().mapToInt(k -> k.keys().size()).sum();
        if (n > 100) {
            throw Errors.validation("Too many items requested for the BatchGetItem call");
        }
        Map<String, List<Map<String, AttributeValue>>> responses = new LinkedHashMap<>();
        Map<String, KeysAndAttributes> unprocessed = new LinkedHashMap<>();
        long answered = 0;
        List<ConsumedCapacity> consumed = new ArrayList<>();
        for (Map.Entry<String, KeysAndAttributes> e : r.requestItems().entrySet()) {
            Table t = engine.table(e.getKey());
            KeysAndAttributes ka = e.getValue();
            Legacy.refuse(ka.hasAttributesToGet(), "AttributesToGet", false);
            Names names = new Names(ka.expressionAttributeNames(), null);
            List<Path> projection = ka.projectionExpression() == null ? null
                    : Reads.checkedProjection(ka.projectionExpression(), names);
            names.requireAllUsed();
            boolean consistent = Boolean.TRUE.equals(ka.consistentRead());
            Units units = new Units(t.name, r.returnConsumedCapacity(), true);
            List<Map<String, AttributeValue>> found = new ArrayList<>();
            Set<String> seenKeys = new HashSet<>();
            for (Map<String, AttributeValue> key : ka.keys()) {
                Checks.key(t, key);
                if (!seenKeys.add(t.partition(key) + "" + t.position(key))) {
                    throw Errors.validation("Provided list of item keys contains duplicates");
                }
                if (answered > MAX_BATCH_GET) {
                    unprocessed.merge(t.name, ka.toBuilder().keys(List.of(key)).build(), (a, b) -> a.toBuilder()
                            .keys(concat(a.keys(), b.keys())).build());
                    continue;
                }
                Map<String, AttributeValue> item = t.get(key);
                long itemSize = item == null ? 0 : Values.itemSize(item);
                answered += itemSize;
                units.addTable(Units.readUnits(itemSize, consistent));
                if (item != null) {
                    found.add(projection == null ? item : Documents.project(item, projection));
                }
            }
            responses.put(t.name, found);
            if (r.returnConsumedCapacity() != null && r.returnConsumedCapacity() != ReturnConsumedCapacity.NONE) {
                consumed.add(units.result());
            }
        }
        BatchGetItemResponse.Builder b = BatchGetItemResponse.builder().responses(responses)
                .unprocessedKeys(unprocessed);
        return (consumed.isEmpty() ? b : b.consumedCapacity(consumed)).build();
    }
}
