package io.lifeline.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prints the engine's figures ({@link Figures}, in a child JVM with a 1 GB heap) to this test's output, in memory
 * and over a data dir. The item count is {@code -Dengine.figures.items} (200,000 by default; the figures in
 * docs/engine.md were taken with 2,600,000). Only counts are asserted: the Scan finds every item written.
 */
@Tag("e2e")
class FiguresTest {
    private static final int ITEMS = Integer.getInteger("engine.figures.items", 200_000);

    @TempDir
    Path dir;

    @Test
    @Timeout(1800)
    void inMemory() throws Exception {
        run(List.of("memory", Integer.toString(Math.min(ITEMS, 200_000))), Math.min(ITEMS, 200_000));
    }

    @Test
    @Timeout(1800)
    void overADataDir() throws Exception {
        run(List.of("durable", Integer.toString(ITEMS), dir.resolve("data").toString()), ITEMS);
    }

    private static String loadAverage() throws IOException {
        Path f = Path.of("/proc/loadavg");
        if (!Files.exists(f)) {
            return "unknown";
        }
        String[] parts = Files.readString(f).split(" ");
        return parts[0] + " " + parts[1] + " " + parts[2];
    }

    private static void run(List<String> args, int items) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx1g", "-cp",
                System.getProperty("java.class.path"), Figures.class.getName()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        System.out.println("load average (1, 5, 15 min) at the end: " + loadAverage() + "; "
                + Runtime.getRuntime().availableProcessors() + " cores");
        System.out.print(out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("items " + items + "\n"), out);
    }
}
