package io.lifeline.local.stack;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Faults for the stack's DynamoDB client, for the revive flow's tests: fail the next n calls that match (before
 * they reach the store, so the SDK does not retry them), or run something just before a matching call (to
 * land another request between two steps of a handler). Each fault fires its count of times and is then spent;
 * match by the agent a call touches, so executions of other tests never take a fault meant for this one.
 */
public final class StoreFaults implements ExecutionInterceptor {
    private static final class Armed {
        final Predicate<SdkRequest> matches;
        final Supplier<RuntimeException> failure;
        final Runnable before;
        int left;
        int fired;

        Armed(Predicate<SdkRequest> matches, int times, Supplier<RuntimeException> failure, Runnable before) {
            this.matches = matches;
            this.left = times;
            this.failure = failure;
            this.before = before;
        }
    }

    /** A handle on one armed fault: how often it fired. */
    public static final class Fault {
        private final Armed armed;

        private Fault(Armed armed) {
            this.armed = armed;
        }

        public int fired() {
            synchronized (armed) {
                return armed.fired;
            }
        }
    }

    private final List<Armed> armed = new ArrayList<>();

    /** The next {@code times} calls that match fail with {@code failure}. */
    public Fault fail(int times, Predicate<SdkRequest> which, Supplier<RuntimeException> failure) {
        Armed a = new Armed(which, times, failure, null);
        synchronized (armed) {
            armed.add(a);
        }
        return new Fault(a);
    }

    /** Runs {@code action} once, just before the next call that matches; the call then goes ahead. */
    public Fault before(Predicate<SdkRequest> which, Runnable action) {
        Armed a = new Armed(which, 1, null, action);
        synchronized (armed) {
            armed.add(a);
        }
        return new Fault(a);
    }

    public void clear() {
        synchronized (armed) {
            armed.clear();
        }
    }

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        Armed hit = null;
        synchronized (armed) {
            for (Armed a : armed) {
                if (a.left > 0 && a.matches.test(context.request())) {
                    a.left--;
                    synchronized (a) {
                        a.fired++;
                    }
                    hit = a;
                    break;
                }
            }
        }
        if (hit == null) {
            return;
        }
        if (hit.before != null) {
            // Outside the lock: the action makes calls of its own through this same client.
            hit.before.run();
        } else {
            throw hit.failure.get();
        }
    }

    // ---- what to match ---------------------------------------------------------------------------------

    /** A call that reads or writes the agent's own item or an item under it, or a command for it. */
    public static Predicate<SdkRequest> touching(String team, String agentId) {
        return r -> keysOf(r).stream().anyMatch(k -> isOf(k, team, agentId));
    }

    /** A write that moves the agent by {@code trigger} (its wire name, as stamped on the item). */
    public static Predicate<SdkRequest> transition(String team, String agentId, String trigger) {
        return r -> r instanceof UpdateItemRequest u && isOf(u.key(), team, agentId)
                && u.expressionAttributeValues().containsValue(AttributeValue.fromS(trigger));
    }

    /** A restart command put for the agent (in the transaction that also stamps it on the agent's live item). */
    public static Predicate<SdkRequest> commandPut(String team, String agentId) {
        Predicate<Map<String, AttributeValue>> command = item -> item.get("sk").s().startsWith("CMD#")
                && item.get("pk").s().startsWith("TEAM#" + team + "#HOST#")
                && AttributeValue.fromS(agentId).equals(item.get("agentId"));
        return r -> r instanceof PutItemRequest p && command.test(p.item())
                || r instanceof TransactWriteItemsRequest t && t.transactItems().stream()
                        .anyMatch(i -> i.put() != null && command.test(i.put().item()));
    }

    /** The write of a revive step's record ({@code REV#...} under the agent). */
    public static Predicate<SdkRequest> revivalRecord(String team, String agentId) {
        return r -> r instanceof UpdateItemRequest u && isOf(u.key(), team, agentId)
                && u.key().get("sk").s().startsWith("REV#");
    }

    /** A read of the agent's flapping item on the ledger ({@code FLAP#<team>#<agent>}), as its flap check makes. */
    public static Predicate<SdkRequest> flapRead(String team, String agentId) {
        return r -> r instanceof GetItemRequest g && g.key().get("pk") != null
                && ("FLAP#" + team + "#" + agentId).equals(g.key().get("pk").s());
    }

    /** Any call on an alert window's items ({@code ALERTS#WINDOW#...}: its head, counts, marks). */
    public static Predicate<SdkRequest> alertWindow() {
        return r -> keysOf(r).stream().anyMatch(k -> k.get("pk") != null && k.get("pk").s() != null
                && k.get("pk").s().startsWith("ALERTS#WINDOW#"))
                || r instanceof BatchGetItemRequest b && b.requestItems().values().stream()
                        .flatMap(k -> k.keys().stream())
                        .anyMatch(k -> k.get("pk") != null && k.get("pk").s().startsWith("ALERTS#WINDOW#"));
    }

    private static boolean isOf(Map<String, AttributeValue> key, String team, String agentId) {
        AttributeValue pk = key.get("pk");
        AttributeValue sk = key.get("sk");
        if (pk == null || sk == null || pk.s() == null || sk.s() == null) {
            return false;
        }
        return pk.s().equals("TEAM#" + team + "#AGENT#" + agentId)
                || pk.s().startsWith("TEAM#" + team + "#HOST#") && AttributeValue.fromS(agentId).equals(key.get("agentId"));
    }

    private static List<Map<String, AttributeValue>> keysOf(SdkRequest r) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        if (r instanceof GetItemRequest g) {
            keys.add(g.key());
        } else if (r instanceof UpdateItemRequest u) {
            keys.add(u.key());
        } else if (r instanceof PutItemRequest p) {
            keys.add(p.item());
        } else if (r instanceof TransactWriteItemsRequest t) {
            for (TransactWriteItem i : t.transactItems()) {
                if (i.update() != null) {
                    keys.add(i.update().key());
                } else if (i.put() != null) {
                    keys.add(i.put().item());
                } else if (i.conditionCheck() != null) {
                    keys.add(i.conditionCheck().key());
                } else if (i.delete() != null) {
                    keys.add(i.delete().key());
                }
            }
        } else if (r instanceof QueryRequest q && q.hasExpressionAttributeValues()) {
            AttributeValue pk = q.expressionAttributeValues().get(":pk");
            if (pk != null) {
                keys.add(Map.of("pk", pk, "sk", AttributeValue.fromS("")));
            }
        }
        return keys;
    }

    // ---- what to fail with -----------------------------------------------------------------------------

    public static RuntimeException throttled() {
        return ProvisionedThroughputExceededException.builder().statusCode(400)
                .message("The level of configured provisioned throughput for the table was exceeded.")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ProvisionedThroughputExceededException")
                        .errorMessage("The level of configured provisioned throughput for the table was exceeded.")
                        .serviceName("DynamoDb").build())
                .build();
    }

    /** A failure that is neither throttling nor the store out of reach: the handler does not retry it. */
    public static RuntimeException validation() {
        return DynamoDbException.builder().statusCode(400).message("One or more parameter values were invalid")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ValidationException")
                        .errorMessage("One or more parameter values were invalid").serviceName("DynamoDb").build())
                .build();
    }
}
