package io.lifeline.local.template;

import io.lifeline.config.Wiring;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItem;
import software.amazon.awssdk.services.dynamodb.model.TransactGetItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.model.EventBridgeException;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequest;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequestEntry;
import software.amazon.awssdk.services.sfn.SfnClient;
import software.amazon.awssdk.services.sfn.model.SfnException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * IAM for Lifeline Local. DynamoDB Local and Local's stand-ins enforce no IAM, so a call that a function's
 * policy in template.yaml does not allow would pass every local test and fail only in AWS. Local therefore
 * hands each function its own view of the shared clients: every call is turned into the IAM actions and
 * resources AWS would authorise (a TransactWriteItems into one PutItem/UpdateItem/DeleteItem/ConditionCheckItem
 * per item, a Query of an index into the index's resource, a PutEvents into one per bus), recorded, and
 * refused with {@code AccessDeniedException} (status 400, as AWS answers) unless the function's
 * {@link FunctionPolicy} allows it.
 *
 * <p>Resources are named in the template's terms: a table, bus or state machine by its logical id (an index
 * as {@code Table/index/name}); a name Local does not know stays as the call gave it.
 */
public final class PolicyGuard {
    /** One authorisation: which function asked for which action on which resource, and the answer. */
    public record Call(String function, String action, String resource, boolean allowed) {
        @Override
        public String toString() {
            return function + " " + action + " on " + resource + (allowed ? "" : " DENIED");
        }
    }

    private final Map<String, String> logicalIdOf = new HashMap<>();
    private final Set<Call> calls = ConcurrentHashMap.newKeySet();

    /** {@code resourceNames}: each template resource's local name or ARN (as Local's functions' environment sees it). */
    public PolicyGuard(Map<String, String> resourceNames) {
        resourceNames.forEach((id, name) -> logicalIdOf.put(name, id));
    }

    /** Every distinct authorisation so far, allowed or denied. */
    public Set<Call> calls() {
        return new LinkedHashSet<>(calls);
    }

    public List<Call> denied() {
        return calls.stream().filter(c -> !c.allowed()).toList();
    }

    public DynamoDbClient dynamo(FunctionPolicy policy, DynamoDbClient client) {
        return guard(DynamoDbClient.class, client, policy, this::dynamoActions, PolicyGuard::dynamoDenied);
    }

    public Supplier<EventBridgeClient> eventBridge(FunctionPolicy policy, Supplier<EventBridgeClient> client) {
        return Wiring.memoize(() -> guard(EventBridgeClient.class, client.get(), policy,
                this::eventBridgeActions, PolicyGuard::eventBridgeDenied));
    }

    public Supplier<SfnClient> stepFunctions(FunctionPolicy policy, Supplier<SfnClient> client) {
        return Wiring.memoize(() -> guard(SfnClient.class, client.get(), policy,
                this::stepFunctionsActions, PolicyGuard::stepFunctionsDenied));
    }

    public Supplier<SqsClient> sqs(FunctionPolicy policy, Supplier<SqsClient> client) {
        return Wiring.memoize(() -> guard(SqsClient.class, client.get(), policy,
                this::sqsActions, PolicyGuard::sqsDenied));
    }

    /** An IAM action on a resource, as AWS authorises one part of a call. */
    record Needed(String action, String resource) {
    }

    private interface Actions {
        List<Needed> of(String operation, SdkRequest request);
    }

    private interface Denial {
        RuntimeException of(String message);
    }

    private <T> T guard(Class<T> type, T delegate, FunctionPolicy policy, Actions actions, Denial denial) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> type.getSimpleName() + " of " + policy.function();
                };
            }
            if (method.getName().equals("close") && method.getParameterCount() == 0) {
                return null; // the clients are Local's, shared by every function: a function cannot close them
            }
            if (method.isDefault() && args != null && args.length == 1 && args[0] instanceof Consumer) {
                // The request-builder form: let the interface build the request and call back the proxy with it.
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            if (args != null && args.length == 1 && args[0] instanceof SdkRequest request) {
                String operation = request.getClass().getSimpleName().replaceFirst("Request$", "");
                for (Needed n : actions.of(operation, request)) {
                    boolean allowed = policy.allows(n.action(), n.resource());
                    calls.add(new Call(policy.function(), n.action(), n.resource(), allowed));
                    if (!allowed) {
                        throw denial.of("Lifeline Local (as IAM): " + policy.function() + " is not authorized to "
                                + "perform: " + n.action() + " on resource: " + n.resource()
                                + " because no statement of its policy in template.yaml allows it");
                    }
                }
            }
            try {
                return method.invoke(delegate, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private String named(String nameOrArn) {
        if (nameOrArn == null) {
            return "*";
        }
        String id = logicalIdOf.get(nameOrArn);
        return id != null ? id : nameOrArn;
    }

    private List<Needed> dynamoActions(String operation, SdkRequest request) {
        List<Needed> out = new ArrayList<>();
        if (request instanceof TransactWriteItemsRequest t) {
            for (TransactWriteItem item : t.transactItems()) {
                if (item.put() != null) {
                    out.add(new Needed("dynamodb:PutItem", named(item.put().tableName())));
                }
                if (item.update() != null) {
                    out.add(new Needed("dynamodb:UpdateItem", named(item.update().tableName())));
                }
                if (item.delete() != null) {
                    out.add(new Needed("dynamodb:DeleteItem", named(item.delete().tableName())));
                }
                if (item.conditionCheck() != null) {
                    out.add(new Needed("dynamodb:ConditionCheckItem", named(item.conditionCheck().tableName())));
                }
            }
        } else if (request instanceof TransactGetItemsRequest t) {
            for (TransactGetItem item : t.transactItems()) {
                out.add(new Needed("dynamodb:GetItem", named(item.get().tableName())));
            }
        } else if (request instanceof BatchGetItemRequest b) {
            b.requestItems().keySet().forEach(table -> out.add(new Needed("dynamodb:BatchGetItem", named(table))));
        } else if (request instanceof BatchWriteItemRequest b) {
            b.requestItems().keySet().forEach(table -> out.add(new Needed("dynamodb:BatchWriteItem", named(table))));
        } else {
            String table = request.getValueForField("TableName", String.class).orElse(null);
            String index = request.getValueForField("IndexName", String.class).orElse(null);
            String resource = named(table);
            out.add(new Needed("dynamodb:" + operation, index == null ? resource : resource + "/index/" + index));
        }
        return out;
    }

    private List<Needed> eventBridgeActions(String operation, SdkRequest request) {
        if (request instanceof PutEventsRequest put) {
            Set<String> buses = new LinkedHashSet<>();
            for (PutEventsRequestEntry e : put.entries()) {
                buses.add(e.eventBusName() == null ? "default" : named(e.eventBusName()));
            }
            return buses.stream().map(bus -> new Needed("events:PutEvents", bus)).toList();
        }
        return List.of(new Needed("events:" + operation, "*"));
    }

    private List<Needed> stepFunctionsActions(String operation, SdkRequest request) {
        String machine = request.getValueForField("stateMachineArn", String.class)
                .or(() -> request.getValueForField("StateMachineArn", String.class)).orElse(null);
        return List.of(new Needed("states:" + operation, named(machine)));
    }

    /** A call on a queue names it by URL; IAM authorises SendMessageBatch as sqs:SendMessage. */
    private List<Needed> sqsActions(String operation, SdkRequest request) {
        String queue = named(request.getValueForField("QueueUrl", String.class).orElse(null));
        String action = operation.replaceFirst("Batch$", "");
        return List.of(new Needed("sqs:" + action, queue));
    }

    private static RuntimeException sqsDenied(String message) {
        return SqsException.builder().statusCode(400).message(message)
                .awsErrorDetails(accessDenied("Sqs")).build();
    }

    private static AwsErrorDetails accessDenied(String service) {
        return AwsErrorDetails.builder().errorCode("AccessDeniedException").serviceName(service)
                .errorMessage("not authorized").build();
    }

    private static RuntimeException dynamoDenied(String message) {
        return DynamoDbException.builder().statusCode(400).message(message)
                .awsErrorDetails(accessDenied("DynamoDb")).build();
    }

    private static RuntimeException eventBridgeDenied(String message) {
        return EventBridgeException.builder().statusCode(400).message(message)
                .awsErrorDetails(accessDenied("EventBridge")).build();
    }

    private static RuntimeException stepFunctionsDenied(String message) {
        return SfnException.builder().statusCode(400).message(message)
                .awsErrorDetails(accessDenied("SFN")).build();
    }
}
