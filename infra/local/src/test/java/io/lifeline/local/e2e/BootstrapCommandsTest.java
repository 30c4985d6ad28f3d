package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.auth.Scope;
import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.app.LocalEngine;
import io.lifeline.local.template.LocalTables;
import io.lifeline.local.template.SamTemplate;
import io.lifeline.store.team.KeyStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Lifeline Local's bootstrap commands on a data dir: {@code create-operator-key} prints a key once and keeps it
 * in {@code operator.key} (0600); {@code create-team} prints the team's admin key, and refuses a second time.
 * The keys they print are the ones the store then knows, with the scope and team they should have.
 */
@Tag("e2e")
class BootstrapCommandsTest {
    @Test
    void createOperatorKey_andCreateTeam_onADataDir_printKeysTheStoreKnows(@TempDir Path dir) throws Exception {
        LocalCommandLine.Run operator = LocalCommandLine.run("--data-dir", dir.toString(), "create-operator-key");
        assertEquals(0, operator.exit(), operator.err());
        Path file = dir.resolve(LifelineLocal.OPERATOR_KEY_FILE);
        assertEquals(operator.key(), Files.readString(file).strip());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));

        LocalCommandLine.Run team = LocalCommandLine.run("--data-dir", dir.toString(), "create-team", "boot");
        assertEquals(0, team.exit(), team.err());
        LocalCommandLine.Run again = LocalCommandLine.run("--data-dir", dir.toString(), "create-team", "boot");
        assertEquals(1, again.exit());
        assertTrue(again.err().contains("already exists"), again.err());

        // Local's own store on the data dir: the commands released its lock when they ended.
        try (LocalEngine store = LocalEngine.open(dir, Clock.systemUTC())) {
            DynamoDbClient dynamo = store.client();
            KeyStore keys = new KeyStore(dynamo, LocalTables.named(SamTemplate.bundled(), LifelineLocal.TABLE_PREFIX).tables());
            assertEquals(List.of(Scope.OPERATOR, "none"), keys.find(operator.key())
                    .map(k -> List.<Object>of(k.scope(), k.team() == null ? "none" : k.team())).orElseThrow());
            assertEquals(List.of(Scope.ADMIN, "boot"), keys.find(team.key())
                    .map(k -> List.<Object>of(k.scope(), k.team())).orElseThrow());
        }
    }

    @Test
    void createOperatorKey_inMemory_hasNothingToDo() {
        LocalCommandLine.Run r = LocalCommandLine.run("--in-memory", "create-operator-key");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("makes its own operator key"), r.err());
    }
}
