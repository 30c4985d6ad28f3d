package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.stack.TestStack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The restart webhook's generated secret in Lifeline Local: made on the first start, kept in the data dir readable
 * by its owner only, the same after a restart (a host configured with it keeps working), and offered only for the
 * webhooks that are deployed.
 */
@Tag("e2e")
class WebhookSecretTest {
    static final Map<String, String> RESTART_HOOK = Map.of("RestartWebhookUrl", "http://127.0.0.1:9/restart");

    @Test
    void restartWebhookSecret_isKeptInTheDataDir_andTheSameAfterARestart(@TempDir Path dir) throws Exception {
        String first;
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, dir, TestStack.template(),
                RESTART_HOOK, Clock.systemUTC()))) {
            assertEquals(Set.of("RestartWebhookSecret"), local.webhookSecrets().keySet(), "only deployed webhooks");
            first = local.webhookSecrets().get("RestartWebhookSecret");
        }
        Path file = dir.resolve(LifelineLocal.SECRET_FILE_PREFIX + "RestartWebhookSecret");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        try (LifelineLocal again = LifelineLocal.start(new LifelineLocal.Options(0, dir, TestStack.template(),
                RESTART_HOOK, Clock.systemUTC()))) {
            assertEquals(first, again.webhookSecrets().get("RestartWebhookSecret"));
        }
    }

    @Test
    void inMemory_eachStartMakesANewSecret_andNoWebhookMeansNone() throws Exception {
        String a;
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                RESTART_HOOK, Clock.systemUTC()))) {
            a = local.webhookSecrets().get("RestartWebhookSecret");
        }
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                RESTART_HOOK, Clock.systemUTC()))) {
            assertNotEquals(a, local.webhookSecrets().get("RestartWebhookSecret"));
        }
        try (LifelineLocal local = LifelineLocal.start(new LifelineLocal.Options(0, null, TestStack.template(),
                Map.of(), Clock.systemUTC()))) {
            assertTrue(local.webhookSecrets().isEmpty());
        }
    }
}
