package io.lifeline.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lifeline.store.dynamo.TableDeclarations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;

/**
 * The live and ledger tables as template.yaml declares them (keys, GSIs, stream, TTL), for the store's tests: which
 * resource is which is read from the functions' global environment ({@code LIVE_TABLE: !Ref ...},
 * {@code LEDGER_TABLE}), as Lifeline Local reads it. The functions module cannot use Local's template reader (it would
 * depend on infra/local); both turn a declaration into a table through {@link TableDeclarations}, and
 * infra/local's {@code LocalTablesTest} holds the two readers to the same CreateTable requests. Jackson's YAML reader keeps a CloudFormation tag's value and drops
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
        return TableDeclarations.createTableRequest(root.path("Resources").path(logicalId).path("Properties"), tableName);
    }

    /** The TTL attribute the table {@code logicalId} declares, or null. */
    public String timeToLiveAttribute(String logicalId) {
        return TableDeclarations.timeToLiveAttribute(root.path("Resources").path(logicalId).path("Properties"));
    }
}
