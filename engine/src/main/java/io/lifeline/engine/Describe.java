package io.lifeline.engine;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingModeSummary;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndexDescription;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/** A table's description as DescribeTable, CreateTable and DeleteTable answer it. */
final class Describe {
    /** The region the engine names in ARNs and stream records. */
    static final String REGION = "local";

    private Describe() {
    }

    static TableDescription of(Table t, String status) {
        List<AttributeDefinition> defs = new ArrayList<>();
        for (Map.Entry<String, String> e : t.types.entrySet()) {
            defs.add(AttributeDefinition.builder().attributeName(e.getKey()).attributeType(e.getValue()).build());
        }
        List<GlobalSecondaryIndexDescription> gsis = new ArrayList<>();
        for (Table.Index ix : t.indexes.values()) {
            Projection.Builder p = Projection.builder().projectionType(ix.projection);
            if (!ix.nonKey.isEmpty()) {
                p.nonKeyAttributes(ix.nonKey);
            }
            gsis.add(GlobalSecondaryIndexDescription.builder().indexName(ix.name).indexStatus("ACTIVE")
                    .keySchema(schema(ix.hash, ix.range)).projection(p.build()).itemCount(ix.entries.count())
                    .indexArn(arn(t) + "/index/" + ix.name).build());
        }
        TableDescription.Builder b = TableDescription.builder().tableName(t.name).tableStatus(status)
                .attributeDefinitions(defs).keySchema(schema(t.hash, t.range)).itemCount(t.items.count())
                .tableSizeBytes(t.bytes()).creationDateTime(Instant.ofEpochMilli(t.created)).tableArn(arn(t))
                .billingModeSummary(BillingModeSummary.builder().billingMode("PAY_PER_REQUEST").build());
        if (!gsis.isEmpty()) {
            b.globalSecondaryIndexes(gsis);
        }
        if (t.stream != null) {
            b.latestStreamArn(t.stream.arn).latestStreamLabel(t.stream.label);
            if (t.stream.enabled()) {
                b.streamSpecification(s -> s.streamEnabled(true).streamViewType(t.stream.viewType));
            }
        }
        return b.build();
    }

    static String arn(Table t) {
        return "arn:aws:dynamodb:" + REGION + ":000000000000:table/" + t.name;
    }

    static List<KeySchemaElement> schema(String hash, String range) {
        List<KeySchemaElement> out = new ArrayList<>();
        out.add(KeySchemaElement.builder().attributeName(hash).keyType(KeyType.HASH).build());
        if (range != null) {
            out.add(KeySchemaElement.builder().attributeName(range).keyType(KeyType.RANGE).build());
        }
        return out;
    }
}
