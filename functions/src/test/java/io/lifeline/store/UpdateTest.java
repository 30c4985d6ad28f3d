package io.lifeline.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.lifeline.store.dynamo.Update;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/** What one conditional update sends, alone (UpdateItem) and as an item of a transaction. */
@Tag("store")
class UpdateTest {
    private static final Map<String, AttributeValue> KEY =
            Map.of("pk", AttributeValue.fromS("TEAM#t"), "sk", AttributeValue.fromS("AGENT#a"));

    private static Update statusChange() {
        Update u = new Update("table", KEY);
        return u.set("status", AttributeValue.fromS("dead"))
                .remove("reason")
                .condition(u.in("status", List.of(AttributeValue.fromS("ready"), AttributeValue.fromS("working"))));
    }

    @Test
    void request_carriesExpressionsPlaceholdersAndBothReturnSettings() {
        UpdateItemRequest expected = UpdateItemRequest.builder().tableName("table").key(KEY)
                .updateExpression("SET #status = :v0 REMOVE #reason")
                .conditionExpression("(#status IN (:v1, :v2))")
                .expressionAttributeNames(Map.of("#status", "status", "#reason", "reason"))
                .expressionAttributeValues(Map.of(":v0", AttributeValue.fromS("dead"),
                        ":v1", AttributeValue.fromS("ready"), ":v2", AttributeValue.fromS("working")))
                .returnValues(ReturnValue.ALL_NEW)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
        assertEquals(expected, statusChange().request(ReturnValue.ALL_NEW));
    }

    @Test
    void transactItem_carriesTheRequestsFields_withoutReturnValues() {
        software.amazon.awssdk.services.dynamodb.model.Update expected = // clash: Update is already used unqualified for another class
                software.amazon.awssdk.services.dynamodb.model.Update.builder().tableName("table").key(KEY) // clash: Update is already used unqualified for another class
                        .updateExpression("SET #status = :v0 REMOVE #reason")
                        .conditionExpression("(#status IN (:v1, :v2))")
                        .expressionAttributeNames(Map.of("#status", "status", "#reason", "reason"))
                        .expressionAttributeValues(Map.of(":v0", AttributeValue.fromS("dead"),
                                ":v1", AttributeValue.fromS("ready"), ":v2", AttributeValue.fromS("working")))
                        .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                        .build();
        assertEquals(expected, statusChange().transactItem().update());
    }

    @Test
    void removeOnly_sendsNoValuesAndNoCondition_aloneOrInATransaction() {
        Update u = new Update("table", KEY).remove("taskId");
        UpdateItemRequest alone = u.request(ReturnValue.NONE);
        software.amazon.awssdk.services.dynamodb.model.Update inTransaction = u.transactItem().update(); // clash: Update is already used unqualified for another class
        assertEquals("REMOVE #taskId", alone.updateExpression());
        assertEquals("REMOVE #taskId", inTransaction.updateExpression());
        // An empty ExpressionAttributeValues is refused by DynamoDB, so neither may send one.
        assertFalse(alone.hasExpressionAttributeValues());
        assertFalse(inTransaction.hasExpressionAttributeValues());
        assertNull(alone.conditionExpression());
        assertNull(inTransaction.conditionExpression());
    }
}
