package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.local.stack.TestStack;
import io.lifeline.store.TemplateTables;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;

/**
 * template.yaml is the one definition of the tables, read twice: by Lifeline Local ({@link SamTemplate}, behind
 * {@link LocalTables}, which every test stack and Local itself create their tables with) and by the store's tests in
 * functions ({@code io.lifeline.store.TemplateTables}, from functions' test-jar; functions cannot depend on Local).
 * Both readers must make the same tables, so a store test runs on what Local and the cloud run on (what the tables
 * are is SamTemplateTest's).
 */
@Tag("unit")
class LocalTablesTest {

    @Test
    void storeTestsTables_andLocalsTables_areTheSameCreateTableRequests() throws Exception {
        SamTemplate local = TestStack.template();
        TemplateTables store = TemplateTables.read(TestStack.templatePath());
        LocalTables tables = LocalTables.named(local, "same");

        assertEquals(tables.liveLogicalId(), store.liveLogicalId());
        assertEquals(tables.ledgerLogicalId(), store.ledgerLogicalId());
        for (String id : List.of(tables.liveLogicalId(), tables.ledgerLogicalId())) {
            CreateTableRequest expected = local.createTableRequest(id, "t-" + id);
            assertEquals(expected, store.createTableRequest(id, "t-" + id), id);
            assertEquals(local.timeToLiveAttribute(id), store.timeToLiveAttribute(id), id);
        }
    }
}
