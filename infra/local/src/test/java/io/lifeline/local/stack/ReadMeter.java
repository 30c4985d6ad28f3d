package io.lifeline.local.stack;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;

/**
 * Counts what the functions read with Query and BatchGetItem (the agent list's requests), asking each for its consumed
 * capacity: requests and items by operation, and read units, in total and per page ({@link #startPage} opens the next
 * page's count). Units are the store's answer (the engine computes them by AWS's published rules), never timed.
 */
public final class ReadMeter implements ExecutionInterceptor {
    private final Map<String, Integer> requests = new ConcurrentHashMap<>();
    private final Map<String, Integer> items = new ConcurrentHashMap<>();
    private double units;
    public final List<Double> perPage = Collections.synchronizedList(new ArrayList<>());

    @Override
    public SdkRequest modifyRequest(Context.ModifyRequest context, ExecutionAttributes attributes) {
        if (context.request() instanceof QueryRequest q) {
            return q.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        if (context.request() instanceof BatchGetItemRequest b) {
            return b.toBuilder().returnConsumedCapacity(ReturnConsumedCapacity.TOTAL).build();
        }
        return context.request();
    }

    @Override
    public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
        String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
        if (context.response() instanceof QueryResponse r) {
            count(operation, r.count(), r.consumedCapacity() == null ? List.of() : List.of(r.consumedCapacity()));
        } else if (context.response() instanceof BatchGetItemResponse r) {
            int n = r.responses().values().stream().mapToInt(List::size).sum();
            count(operation, n, r.consumedCapacity());
        }
    }

    private synchronized void count(String operation, int n, List<ConsumedCapacity> capacity) {
        requests.merge(operation, 1, Integer::sum);
        items.merge(operation, n, Integer::sum);
        double u = capacity.stream().mapToDouble(ConsumedCapacity::capacityUnits).sum();
        units += u;
        if (!perPage.isEmpty()) {
            perPage.set(perPage.size() - 1, perPage.get(perPage.size() - 1) + u);
        }
    }

    /** Counts what follows as the next page's. */
    public synchronized void startPage() {
        perPage.add(0.0);
    }

    public synchronized void reset() {
        requests.clear();
        items.clear();
        units = 0;
        perPage.clear();
    }

    public synchronized double readUnits() {
        return units;
    }

    public int requests(String operation) {
        return requests.getOrDefault(operation, 0);
    }

    public int itemsRead(String operation) {
        return items.getOrDefault(operation, 0);
    }

    @Override
    public synchronized String toString() {
        return "requests " + requests + ", items " + items + ", read units " + units;
    }
}
