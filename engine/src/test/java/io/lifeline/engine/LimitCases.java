package io.lifeline.engine;

import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/** Item and key size limits and malformed values, each a ValidationException ("Quotas in Amazon DynamoDB"). */
interface LimitCases extends Cases {
    private void refused(PutItemRequest r) {
        DynamoDbException e = assertThrows(DynamoDbException.class, () -> db().putItem(r));
        assertEquals("ValidationException", e.awsErrorDetails().errorCode(), e.getMessage());
    }

    @Test
    default void fourHundredKilobytesCountingNames() {
        String t = table();
        // pk(2)+"a"(1) + sk(2)+"1"(1) + name "big"(3) = 9 bytes besides the value.
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (400 KB,"
                + " names and values; moto refuses an item of exactly 409,600 bytes)", () -> db().putItem(r ->
                r.tableName(t).item(map("pk", "a", "sk", "1", "big", "x".repeat(400 * 1024 - 9)))));
        if (moto()) {
            return;
        }
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "a", "sk", "2", "big",
                "x".repeat(400 * 1024 - 8))).build());
        DynamoDbException grow = assertThrows(DynamoDbException.class, () -> db().updateItem(r -> r.tableName(t)
                .key(map("pk", "a", "sk", "1")).updateExpression("SET more = :v")
                .expressionAttributeValues(map(":v", "y")))) ;
        assertEquals("ValidationException", grow.awsErrorDetails().errorCode());
    }

    @Test
    default void keySizesAndEmptyKeys() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "p".repeat(2048), "sk", "s".repeat(1024))));
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "p".repeat(2049), "sk", "1")).build());
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "p", "sk", "s".repeat(1025))).build());
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "", "sk", "1")).build());
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "a")).build());
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "a", "sk", n("1"))).build());
    }

    @Test
    default void malformedSets() {
        String t = table();
        refused(PutItemRequest.builder().tableName(t).item(map("pk", "a", "sk", "1", "ss",
                AttributeValue.fromSs(List.of()))).build());
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                + "HowItWorks.NamingRulesDataTypes.html (each value within a set must be unique)",
                () -> refused(PutItemRequest.builder().tableName(t).item(map("pk", "a", "sk", "1", "ss",
                        AttributeValue.fromSs(List.of("x", "x")))).build()));
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                + "HowItWorks.NamingRulesDataTypes.html (a number set holds numbers)",
                () -> refused(PutItemRequest.builder().tableName(t).item(map("pk", "a", "sk", "1", "ns",
                        AttributeValue.fromNs(List.of("1", "x")))).build()));
    }
}
