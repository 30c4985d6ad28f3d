package io.lifeline.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
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
 * The live and ledger tables as template.yaml declares them (keys, GSIs, stream, TTL), for the store's tests: which
 * resource is which is read from the functions' global environment ({@code LIVE_TABLE: !Ref ...},
 * {@code LEDGER_TABLE}), as Lifeline Local reads it. The functions module cannot use Local's template reader (it would
 * depend on infra/local), so this is a second reader of the same definitions; infra/local's {@code LocalTablesTest}
 * holds the two to the same CreateTable requests. Jackson's YAML reader keeps a CloudFormation tag's value and drops
 * the tag ({@code !Ref LiveTable} reads as {@code LiveTable}), which is all the table definitions need.
 */
public final class TemplateTables {
    private final JsonNode root;

    private TemplateTables(JsonNode root) {
        this.root = root;
    }

    /** The repo's template.yaml (the build passes its path as {@code lifeline.template}). */
    public static TemplateTables repo() {
        return read(Path.of(System.getProperty("lifeline.template", "../template.yaml")));
    }

    public static TemplateTables read(Path template) {
        try {
            return new TemplateTables(new ObjectMapper(new YAMLFactory()).readTree(template.toFile()));
        } catch (IOException e) {
            throw new UncheckedIOException("template.yaml could not be read at " + template.toAbsolutePath(), e);
        }
    }

    /** The logical id of the live table ({@code Globals.Function.Environment.Variables.LIVE_TABLE}). */
    public String liveLogicalId() {
        return tableBehind("LIVE_TABLE");
    }

    /** The logical id of the ledger table ({@code Globals.Function.Environment.Variables.LEDGER_TABLE}). */
    public String ledgerLogicalId() {
        return tableBehind("LEDGER_TABLE");
    }

    private String tableBehind(String variable) {
        String id = root.path("Globals").path("Function").path("Environment").path("Variables").path(variable)
                .asText("");
        if (!"AWS::DynamoDB::Table".equals(root.path("Resources").path(id).path("Type").asText())) {
            throw new IllegalStateException("template.yaml: Globals.Function.Environment." + variable
                    + " must name a table resource (!Ref), not '" + id + "'");
        }
        return id;
    }

    /** CreateTable for the table {@code logicalId} under {@code tableName}: keys, GSIs and stream as declared. */
    public CreateTableRequest createTableRequest(String logicalId, String tableName) {
        JsonNode p = root.path("Resources").path(logicalId).path("Properties");
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

    /** The TTL attribute the table {@code logicalId} declares, or null. */
    public String timeToLiveAttribute(String logicalId) {
        JsonNode ttl = root.path("Resources").path(logicalId).path("Properties").path("TimeToLiveSpecification");
        return ttl.path("Enabled").asBoolean(false) ? ttl.path("AttributeName").asText() : null;
    }

    private static List<KeySchemaElement> keySchema(JsonNode schema) {
        List<KeySchemaElement> keys = new ArrayList<>();
        schema.forEach(k -> keys.add(KeySchemaElement.builder().attributeName(k.path("AttributeName").asText())
                .keyType(k.path("KeyType").asText()).build()));
        return keys;
    }
}
