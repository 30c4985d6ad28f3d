package io.lifeline.store.dynamo;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;

/**
 * A table as template.yaml declares it (an {@code AWS::DynamoDB::Table} resource's properties, already parsed), turned
 * into what DynamoDB Local needs to create it: keys, GSIs and stream, and the TTL attribute. The one reader of table
 * declarations: Lifeline Local's template reader and the store's test harness both use it, so the tables a test
 * creates are the tables Local and AWS create.
 */
public final class TableDeclarations {
    private TableDeclarations() {
    }

    /** CreateTable for the table declared by {@code properties} (a table resource's Properties), named {@code tableName}. */
    public static CreateTableRequest createTableRequest(JsonNode properties, String tableName) {
        JsonNode p = properties;
        List<AttributeDefinition> attributes = new ArrayList<>();
        p.path("AttributeDefinitions").forEach(a -> attributes.add(AttributeDefinition.builder()
                .attributeName(a.path("AttributeName").asText()).attributeType(a.path("AttributeType").asText())
                .build()));
        List<GlobalSecondaryIndex> indexes = new ArrayList<>();
        p.path("GlobalSecondaryIndexes").forEach(g -> indexes.add(GlobalSecondaryIndex.builder()
                .indexName(g.path("IndexName").asText())
                .keySchema(keySchema(g.path("KeySchema")))
                .projection(Projection.builder().projectionType(g.path("Projection").path("ProjectionType").asText())
                        .build())
                .build()));
        JsonNode stream = p.path("StreamSpecification");
        return CreateTableRequest.builder()
                .tableName(tableName)
                .billingMode(BillingMode.fromValue(p.path("BillingMode").asText("PAY_PER_REQUEST")))
                .attributeDefinitions(attributes)
                .keySchema(keySchema(p.path("KeySchema")))
                .globalSecondaryIndexes(indexes.isEmpty() ? null : indexes)
                .streamSpecification(stream.isMissingNode() ? null : StreamSpecification.builder()
                        .streamEnabled(true).streamViewType(stream.path("StreamViewType").asText()).build())
                .build();
    }

    /** The TTL attribute the table declared by {@code properties} enables, or null. */
    public static String timeToLiveAttribute(JsonNode properties) {
        JsonNode ttl = properties.path("TimeToLiveSpecification");
        return ttl.path("Enabled").asBoolean(false) ? ttl.path("AttributeName").asText() : null;
    }

    private static List<KeySchemaElement> keySchema(JsonNode schema) {
        List<KeySchemaElement> keys = new ArrayList<>();
        schema.forEach(k -> keys.add(KeySchemaElement.builder().attributeName(k.path("AttributeName").asText())
                .keyType(k.path("KeyType").asText()).build()));
        return keys;
    }
}
