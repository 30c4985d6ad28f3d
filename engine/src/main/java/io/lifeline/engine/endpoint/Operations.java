package io.lifeline.engine.endpoint;

import io.lifeline.engine.Errors;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.core.SdkPojo;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The operations an {@code X-Amz-Target} names, found by reflection on the SDK's client interfaces: each method
 * that takes one request object is an operation named by its request class ({@code PutItemRequest} is
 * {@code PutItem}). So every operation of the interfaces is dispatched the same way, and the engine itself answers
 * the ones it does not implement, by name, as it does in process.
 */
final class Operations {
    static final String DYNAMODB = "DynamoDB_20120810.";
    static final String STREAMS = "DynamoDBStreams_20120810.";

    /** One operation: the interface method to call, on which client. */
    private record Operation(Object client, Method method) {
    }

    private final Map<String, Operation> byTarget = new HashMap<>();
    private final boolean streams;

    Operations(DynamoDbClient dynamo, DynamoDbStreamsClient streamsClient) {
        add(DYNAMODB, DynamoDbClient.class, dynamo);
        streams = streamsClient != null;
        if (streams) {
            add(STREAMS, DynamoDbStreamsClient.class, streamsClient);
        }
    }

    private void add(String prefix, Class<?> api, Object client) {
        for (Method m : api.getMethods()) {
            Class<?>[] params = m.getParameterTypes();
            if (params.length == 1 && SdkRequest.class.isAssignableFrom(params[0])
                    && SdkResponse.class.isAssignableFrom(m.getReturnType())) {
                String name = params[0].getSimpleName();
                byTarget.put(prefix + name.substring(0, name.length() - "Request".length()), new Operation(client, m));
            }
        }
    }

    /** Whether {@code target} names an operation served here. */
    boolean knows(String target) {
        return byTarget.containsKey(target);
    }

    /**
     * Why {@code target} is not served, worded for the caller: a streams operation when no streams client was given
     * answers a ValidationException naming it (the service exists, this build does not serve it); anything else is
     * an unknown operation.
     */
    RuntimeException unknown(String target) {
        if (target != null && target.startsWith(STREAMS) && !streams) {
            return Errors.unsupported("streams (" + target.substring(STREAMS.length()) + "): this endpoint was "
                    + "started without a streams client");
        }
        return new Endpoint.Refusal(400, "UnknownOperationException", null);
    }

    /** A new builder of {@code target}'s request, to fill from the body. */
    SdkPojo requestBuilder(String target) {
        try {
            return (SdkPojo) byTarget.get(target).method.getParameterTypes()[0].getMethod("builder").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no builder for " + target, e);
        }
    }

    /** Calls the operation; an exception the client throws is thrown as it is. */
    SdkPojo call(String target, Object request) {
        Operation op = byTarget.get(target);
        try {
            return (SdkPojo) op.method.invoke(op.client, request);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
