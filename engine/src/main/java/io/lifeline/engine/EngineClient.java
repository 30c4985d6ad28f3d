package io.lifeline.engine;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Locale;
import java.util.function.Consumer;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbServiceClientConfiguration;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DeleteTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTimeToLiveRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ListTablesRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateTimeToLiveRequest;

/**
 * The engine behind the SDK's {@link DynamoDbClient} interface. A proxy rather than a class that overrides each
 * method: the interface has some 60 operations, and a proxy answers every one the engine does not implement with a
 * ValidationException naming it (the interface's own defaults would throw UnsupportedOperationException, which no
 * caller written for DynamoDB expects). The SDK's convenience forms (a {@code Consumer} of a builder, the
 * paginators, whether given a request or a builder, the no-argument listTables) are the interface's default methods,
 * run as they are: a paginator calls the engine's Query or Scan page by page.
 */
final class EngineClient implements InvocationHandler {
    private final Engine engine;
    private final Reads reads;
    private final Batches batches;

    private EngineClient(Engine engine, Reads reads, Batches batches) {
        this.engine = engine;
        this.reads = reads;
        this.batches = batches;
    }

    static DynamoDbClient of(Engine engine, Reads reads, Batches batches) {
        return (DynamoDbClient) Proxy.newProxyInstance(DynamoDbClient.class.getClassLoader(),
                new Class<?>[] {DynamoDbClient.class}, new EngineClient(engine, reads, batches));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        int n = args == null ? 0 : args.length;
        if (method.getDeclaringClass() == Object.class) {
            return switch (name) {
                case "toString" -> "LifelineEngineClient";
                case "hashCode" -> System.identityHashCode(proxy);
                default -> proxy == args[0];
            };
        }
        boolean convenience = method.isDefault() && (n == 0 || args[0] instanceof Consumer
                || name.endsWith("Paginator")) && !name.equals("serviceClientConfiguration");
        if (convenience) {
            try {
                return InvocationHandler.invokeDefault(proxy, method, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
        switch (name) {
            case "serviceName":
                return DynamoDbClient.SERVICE_NAME;
            case "close":
                return null;
            case "serviceClientConfiguration":
                return DynamoDbServiceClientConfiguration.builder().build();
            default:
                break;
        }
        if (n != 1) {
            throw Errors.unsupported("the operation " + operation(name));
        }
        return call(name, args[0]);
    }

    private Object call(String name, Object request) {
        switch (name) {
            case "createTable":
                return engine.createTable((CreateTableRequest) request);
            case "deleteTable":
                return engine.deleteTable((DeleteTableRequest) request);
            case "describeTable":
                return engine.describeTable((DescribeTableRequest) request);
            case "listTables":
                return engine.listTables((ListTablesRequest) request);
            case "putItem":
                return engine.putItem((PutItemRequest) request);
            case "updateItem":
                return engine.updateItem((UpdateItemRequest) request);
            case "deleteItem":
                return engine.deleteItem((DeleteItemRequest) request);
            case "getItem":
                return engine.getItem((GetItemRequest) request);
            default:
                break;
        }
        engine.acquire();
        try {
            switch (name) {
                case "query":
                    return reads.query((QueryRequest) request);
                case "scan":
                    return reads.scan((ScanRequest) request);
                case "transactWriteItems":
                    return batches.transactWrite((TransactWriteItemsRequest) request, engine.clock.millis());
                case "batchWriteItem":
                    return batches.batchWrite((BatchWriteItemRequest) request);
                case "batchGetItem":
                    return batches.batchGet((BatchGetItemRequest) request);
                case "updateTable":
                    return engine.streams.update((UpdateTableRequest) request);
                case "updateTimeToLive":
                    return Ttl.update(engine, (UpdateTimeToLiveRequest) request);
                case "describeTimeToLive":
                    return Ttl.describe(engine, (DescribeTimeToLiveRequest) request);
                default:
                    throw Errors.unsupported("the operation " + operation(name));
            }
        } finally {
            engine.release();
        }
    }

    private static String operation(String method) {
        return method.substring(0, 1).toUpperCase(Locale.ROOT) + method.substring(1);
    }
}
