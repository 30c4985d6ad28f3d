package io.lifeline.store;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The store's client as the store tests give it: every data-plane request goes to {@link StoreTables}' engine
 * unchanged, except that it asks for its consumed capacity ({@code ReturnConsumedCapacity=TOTAL}), and is
 * recorded (operation, table, units, refused or not), so a test can count the requests and units a store call
 * costs. The engine's in-process client takes no SDK interceptor, hence a delegate rather than an
 * {@code ExecutionInterceptor}.
 */
final class MeteredDynamo implements DynamoDbClient {
    /** One request: its operation, the table (the first, for transactions), the units the engine reported. */
    record Call(String operation, String table, Double units, boolean refused) {
        boolean isWrite() {
            return operation.equals("UpdateItem") || operation.equals("PutItem") || operation.equals("DeleteItem")
                    || operation.equals("TransactWriteItems") || operation.equals("BatchWriteItem");
        }
    }

    private static final ReturnConsumedCapacity TOTAL = ReturnConsumedCapacity.TOTAL;

    private final DynamoDbClient local;
    private final List<Call> calls = new ArrayList<>();

    MeteredDynamo(DynamoDbClient local) {
        this.local = local;
    }

    synchronized List<Call> calls() {
        return List.copyOf(calls);
    }

    synchronized void reset() {
        calls.clear();
    }

    private <T> T call(String operation, String table, Supplier<T> send,
                       Function<T, ConsumedCapacity> units) {
        try {
            T response = send.get();
            ConsumedCapacity c = units.apply(response);
            record(new Call(operation, table, c == null ? null : c.capacityUnits(), false));
            return response;
        } catch (RuntimeException e) {
            record(new Call(operation, table, null, true));
            throw e;
        }
    }

    private synchronized void record(Call c) {
        calls.add(c);
    }

    @Override
    public UpdateItemResponse updateItem(UpdateItemRequest r) {
        return call("UpdateItem", r.tableName(),
                () -> local.updateItem(r.toBuilder().returnConsumedCapacity(TOTAL).build()),
                UpdateItemResponse::consumedCapacity);
    }

    @Override
    public PutItemResponse putItem(PutItemRequest r) {
        return call("PutItem", r.tableName(), () -> local.putItem(r.toBuilder().returnConsumedCapacity(TOTAL).build()),
                PutItemResponse::consumedCapacity);
    }

    @Override
    public DeleteItemResponse deleteItem(DeleteItemRequest r) {
        return call("DeleteItem", r.tableName(),
                () -> local.deleteItem(r.toBuilder().returnConsumedCapacity(TOTAL).build()),
                DeleteItemResponse::consumedCapacity);
    }

    @Override
    public GetItemResponse getItem(GetItemRequest r) {
        return call("GetItem", r.tableName(), () -> local.getItem(r.toBuilder().returnConsumedCapacity(TOTAL).build()),
                GetItemResponse::consumedCapacity);
    }

    @Override
    public QueryResponse query(QueryRequest r) {
        return call("Query", r.tableName(), () -> local.query(r.toBuilder().returnConsumedCapacity(TOTAL).build()),
                QueryResponse::consumedCapacity);
    }

    @Override
    public ScanResponse scan(ScanRequest r) {
        return call("Scan", r.tableName(), () -> local.scan(r.returnConsumedCapacity() != null ? r
                : r.toBuilder().returnConsumedCapacity(TOTAL).build()), ScanResponse::consumedCapacity);
    }

    @Override
    public BatchGetItemResponse batchGetItem(BatchGetItemRequest r) {
        return call("BatchGetItem", String.join(",", r.requestItems().keySet()), () -> local.batchGetItem(r),
                x -> null);
    }

    @Override
    public BatchWriteItemResponse batchWriteItem(BatchWriteItemRequest r) {
        return call("BatchWriteItem", String.join(",", r.requestItems().keySet()), () -> local.batchWriteItem(r),
                x -> null);
    }

    @Override
    public TransactWriteItemsResponse transactWriteItems(TransactWriteItemsRequest r) {
        var first = r.transactItems().get(0);
        String table = first.update() != null ? first.update().tableName() : first.put() != null
                ? first.put().tableName() : first.conditionCheck() != null ? first.conditionCheck().tableName()
                : first.delete().tableName();
        return call("TransactWriteItems", table, () -> local.transactWriteItems(r), x -> null);
    }

    @Override
    public TransactGetItemsResponse transactGetItems(TransactGetItemsRequest r) {
        return call("TransactGetItems", "", () -> local.transactGetItems(r), x -> null);
    }

    @Override
    public String serviceName() {
        return local.serviceName();
    }

    @Override
    public void close() {
        // the JVM's engine client is shared: StoreTables owns it
    }
}
