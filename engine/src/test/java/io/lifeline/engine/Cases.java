package io.lifeline.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * What every conformance case needs: the client under test (the engine, moto's server or real DynamoDB), which one
 * it is, fresh tables, and short ways to write values. Each case is a default method of an interface extending
 * this one, so one class per target runs every case.
 */
interface Cases {
    AtomicInteger TABLES = new AtomicInteger();

    DynamoDbClient db();

    /** The DynamoDB Streams client of the same target. */
    DynamoDbStreamsClient streams();

    /** "engine", "moto" or "aws". */
    String target();

    default boolean moto() {
        return target().equals("moto");
    }

    default boolean engine() {
        return target().equals("engine");
    }

    /**
     * An assertion of AWS's documented behaviour where moto is known to answer otherwise: on the engine and on real
     * DynamoDB it must hold; on moto a failure is printed as a difference ({@code page} names AWS's page) and the
     * case goes on. If moto comes to agree, that is printed too.
     */
    default void awsDocumented(String page, Runnable assertion) {
        if (!moto()) {
            assertion.run();
            return;
        }
        try {
            assertion.run();
            System.out.println("moto agrees with AWS (" + page + ")");
        } catch (AssertionError | RuntimeException e) {
            System.out.println("DIFFERENCE moto vs AWS (" + page + "): " + e.getMessage());
        }
    }

    /** A fresh table keyed pk (S) and sk (S), like both of Lifeline's tables. */
    default String table() {
        return table("S", null);
    }

    /** A fresh table keyed pk (S) and sk of {@code sortType}, with an optional keys-only GSI byTeam (tpk, tsk). */
    default String table(String sortType, String gsi) {
        return table(sortType, gsi, null);
    }

    /** The same, with a stream of {@code streamViewType} when it is not null. */
    default String table(String sortType, String gsi, String streamViewType) {
        String name = "conf-" + target() + "-" + ProcessHandle.current().pid() + "-" + TABLES.incrementAndGet();
        List<AttributeDefinition> defs = new ArrayList<>(List.of(def("pk", "S"), def("sk", sortType)));
        var b = CreateTableRequest.builder().tableName(name)
                .billingMode(BillingMode.PAY_PER_REQUEST).keySchema(key("pk", KeyType.HASH), key("sk", KeyType.RANGE));
        if (gsi != null) {
            defs.add(def("tpk", "S"));
            defs.add(def("tsk", "S"));
            b.globalSecondaryIndexes(GlobalSecondaryIndex.builder().indexName(gsi)
                    .keySchema(key("tpk", KeyType.HASH), key("tsk", KeyType.RANGE))
                    .projection(Projection.builder().projectionType(ProjectionType.KEYS_ONLY).build()).build());
        }
        if (streamViewType != null) {
            b.streamSpecification(st -> st.streamEnabled(true).streamViewType(streamViewType));
        }
        db().createTable(b.attributeDefinitions(defs).build());
        return name;
    }

    private static AttributeDefinition def(String name, String type) {
        return AttributeDefinition.builder().attributeName(name).attributeType(type).build();
    }

    private static KeySchemaElement key(String name, KeyType type) {
        return KeySchemaElement.builder().attributeName(name).keyType(type).build();
    }

    static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static AttributeValue n(String v) {
        return AttributeValue.fromN(v);
    }

    /** A binary of the given byte values (ints, so 0x80..0xff need no cast). */
    static AttributeValue b(int... v) {
        byte[] bytes = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            bytes[i] = (byte) v[i];
        }
        return AttributeValue.fromB(SdkBytes.fromByteArray(bytes));
    }

    static AttributeValue l(AttributeValue... v) {
        return AttributeValue.fromL(List.of(v));
    }

    static AttributeValue m(Object... kv) {
        return AttributeValue.fromM(map(kv));
    }

    /** A map of alternating names and values; a String value is an S. */
    static Map<String, AttributeValue> map(Object... kv) {
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            Object v = kv[i + 1];
            out.put((String) kv[i], v instanceof String str ? s(str) : (AttributeValue) v);
        }
        return out;
    }

    /** Names for ExpressionAttributeNames: alternating alias and name. */
    static Map<String, String> names(String... kv) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            out.put(kv[i], kv[i + 1]);
        }
        return out;
    }
}
