package io.lifeline.client.heartbeatmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.client.Readme;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** docs/heartbeat-md.md's whole-file example, run as a reader would: parsed, woken, its shell action done. */
@Tag("unit")
class DocsExamplesTest {
    @Test
    @Timeout(60)
    void heartbeatMdPage_exampleFile_parsesAndWakes(@TempDir Path dir) throws Exception {
        List<String> blocks = Readme.blocks(Readme.page("docs/heartbeat-md.md"), "markdown");
        assertEquals(1, blocks.size(), "docs/heartbeat-md.md has one whole-file example");
        HeartbeatFile parsed = HeartbeatFile.parse(blocks.get(0));
        assertEquals(List.of("hello", "dashboard-up"), parsed.actions().stream().map(Action::id).toList());

        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, blocks.get(0));
        WakeResult r = Wake.run(file, Clock.systemUTC());
        assertTrue(r.succeeded().stream().anyMatch(a -> a.actionId().equals("hello")), r.toString());
        HeartbeatFile after = HeartbeatFile.parse(Files.readString(file));
        assertEquals(ActionStatus.COMPLETED, after.actions().get(0).status(), Files.readString(file));
    }
}
