package io.lifeline.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
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
 * Counts DynamoDB requests by operation and asks every data-plane request for its consumed capacity
 * ({@code INDEXES}, so GSI units come back separately), around the client the functions use ({@link #around}).
 * Refused conditional writes are counted too (they are billed: a refused write costs its write units).
 */
public final class CapacityMeter {

    /** One request: its operation, and the units the store reported for the table and its indexes. */
    public record Call(String operation, double readUnits, double writeUnits, double gsiWriteUnits,
                       double gsiReadUnits, boolean reported) {
    }

    /** Totals over some calls. */
    public record Totals(int requests, Map<String, Integer> byOperation, double readUnits, double writeUnits,
                         double gsiWriteUnits, int unreported) {
        public double per(int n) {
            return requests / (double) n;
        }
    }

    private static final boolean DEBUG = BenchMain.DEBUG;
    private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean enabled = true;

    public void enabled(boolean on) {
        enabled = on;
    }

    public void reset() {
        calls.clear();
    }

    public List<Call> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    public Totals totals() {
        return totals(calls());
    }

    public static Totals totals(List<Call> calls) {
        Map<String, Integer> byOp = new TreeMap<>();
        double r = 0;
        double w = 0;
        double g = 0;
        int unreported = 0;
        for (Call c : calls) {
            byOp.merge(c.operation(), 1, Integer::sum);
            r += c.readUnits() + c.gsiReadUnits();
            w += c.writeUnits();
            g += c.gsiWriteUnits();
            if (!c.reported()) {
                unreported++;
            }
        }
        return new Totals(calls.size(), byOp, r, w, g, unreported);
    }

    /**
     * {@code target} with every request counted: each data-plane request asks for its consumed capacity, each answer
     * is recorded, each failure charged by the rule. A wrapper, not an SDK interceptor, because the engine's client is
     * in process and runs no interceptor; the SDK's convenience forms (a builder's {@code Consumer}, the paginators)
     * run as the interface's default methods, so each page they fetch comes back through here and is counted.
     */
    public DynamoDbClient around(DynamoDbClient target) {
        return (DynamoDbClient) Proxy.newProxyInstance(DynamoDbClient.class.getClassLoader(),
                new Class<?>[] {DynamoDbClient.class}, (proxy, method, args) -> {
                    boolean one = args != null && args.length == 1;
                    if (method.isDefault() && one
                            && (args[0] instanceof Consumer || method.getName().endsWith("Paginator"))) {
                        return InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    if (!one || !(args[0] instanceof SdkRequest request)) {
                        return forward(method, target, args);
                    }
                    String op = operation(method.getName());
                    Object response;
                    try {
                        response = method.invoke(target, withCapacity(request));
                    } catch (InvocationTargetException e) {
                        failed(op);
                        throw e.getCause();
                    }
                    if (enabled && response instanceof SdkResponse r) {
                        record(op, capacities(r));
                    }
                    return response;
                });
    }

    private static Object forward(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** "updateItem" as DynamoDB names the operation: "UpdateItem". */
    private static String operation(String method) {
        return Character.toUpperCase(method.charAt(0)) + method.substring(1);
    }

    /** The request asking for its consumed capacity ({@code INDEXES}), when it is one that can. */
    static SdkRequest withCapacity(SdkRequest r) {
        ReturnConsumedCapacity idx = ReturnConsumedCapacity.INDEXES;
        if (r instanceof UpdateItemRequest u) {
            return u.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof PutItemRequest p) {
            return p.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof DeleteItemRequest d) {
            return d.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof GetItemRequest g) {
            return g.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof QueryRequest q) {
            return q.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof ScanRequest s) {
            return s.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof TransactWriteItemsRequest t) {
            return t.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof TransactGetItemsRequest t) {
            return t.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof BatchWriteItemRequest b) {
            return b.toBuilder().returnConsumedCapacity(idx).build();
        } else if (r instanceof BatchGetItemRequest b) {
            return b.toBuilder().returnConsumedCapacity(idx).build();
        }
        return r;
    }

    /**
     * A failed request. A refused conditional write: DynamoDB bills it, but the SDK error carries no capacity, so it is
     * charged by the rule (1 write unit for an item under 1 KB) and marked as not reported.
     */
    private void failed(String op) {
        if (enabled) {
            boolean write = isWrite(op);
            calls.add(new Call(op, write ? 0 : 0.5, write ? 1 : 0, 0, 0, false));
        }
    }

    static boolean isWrite(String op) {
        return op.equals("UpdateItem") || op.equals("PutItem") || op.equals("DeleteItem")
                || op.equals("TransactWriteItems") || op.equals("BatchWriteItem");
    }

    private static List<ConsumedCapacity> capacities(SdkResponse response) {
        if (response instanceof UpdateItemResponse u) {
            return one(u.consumedCapacity());
        } else if (response instanceof PutItemResponse p) {
            return one(p.consumedCapacity());
        } else if (response instanceof DeleteItemResponse d) {
            return one(d.consumedCapacity());
        } else if (response instanceof GetItemResponse g) {
            return one(g.consumedCapacity());
        } else if (response instanceof QueryResponse q) {
            return one(q.consumedCapacity());
        } else if (response instanceof ScanResponse s) {
            return one(s.consumedCapacity());
        } else if (response instanceof TransactWriteItemsResponse t) {
            return t.hasConsumedCapacity() ? t.consumedCapacity() : null;
        } else if (response instanceof TransactGetItemsResponse t) {
            return t.hasConsumedCapacity() ? t.consumedCapacity() : null;
        } else if (response instanceof BatchWriteItemResponse b) {
            return b.hasConsumedCapacity() ? b.consumedCapacity() : null;
        } else if (response instanceof BatchGetItemResponse b) {
            return b.hasConsumedCapacity() ? b.consumedCapacity() : null;
        }
        return null;
    }

    private static List<ConsumedCapacity> one(ConsumedCapacity c) {
        return c == null ? null : List.of(c);
    }

    void record(String op, List<ConsumedCapacity> capacities) {
        if (DEBUG) {
            System.err.println("capacity " + op + ": " + capacities);
        }
        if (capacities == null || capacities.isEmpty()) {
            calls.add(new Call(op, 0, 0, 0, 0, false));
            return;
        }
        boolean write = isWrite(op);
        double r = 0;
        double w = 0;
        double gw = 0;
        double gr = 0;
        for (ConsumedCapacity c : capacities) {
            // Table units: the split when given, else the total less the indexes', by the operation's kind.
            double indexUnits = 0;
            if (c.hasGlobalSecondaryIndexes()) {
                for (var e : c.globalSecondaryIndexes().values()) {
                    double u = e.capacityUnits() == null ? 0 : e.capacityUnits();
                    indexUnits += u;
                    if (write) {
                        gw += u;
                    } else {
                        gr += u;
                    }
                }
            }
            if (c.table() != null && c.table().capacityUnits() != null) {
                double u = c.table().capacityUnits();
                if (write) {
                    w += u;
                } else {
                    r += u;
                }
            } else if (c.capacityUnits() != null) {
                double u = c.capacityUnits() - indexUnits;
                if (write) {
                    w += u;
                } else {
                    r += u;
                }
            }
        }
        calls.add(new Call(op, r, w, gw, gr, true));
    }
}
