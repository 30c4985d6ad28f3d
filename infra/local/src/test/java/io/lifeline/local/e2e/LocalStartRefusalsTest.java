package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.app.LifelineLocal;
import io.lifeline.local.app.StartRefusedException;
import io.lifeline.local.stack.TestStack;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Lifeline Local refuses before it starts, each in one line with a non-zero exit and no
 * stack trace: a port something else listens on, a {@code --param} the template does not declare, and (in one
 * JVM) a data dir it already holds. {@link LocalProcessGuardsTest} covers the data dir across processes.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("e2e")
class LocalStartRefusalsTest {
    @TempDir
    Path dataDir;

    @Test
    void start_onAPortInUse_isRefusedInOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            // --verbose: the default console filter is a process-wide log sink; leave this JVM's alone.
            LocalCommandLine.Run run = LocalCommandLine.run("--verbose", "--in-memory", "--port",
                    Integer.toString(port));
            assertEquals(1, run.exit(), run.err());
            assertEquals(List.of("port " + port + " is in use; use --port"), lines(run.err()));
            assertFalse(run.out().contains("Lifeline Local is running"), run.out());
        }
    }

    @Test
    void start_withAnUnknownParam_isRefusedInOneLineNamingTheKnownParameters() throws Exception {
        LocalCommandLine.Run run = LocalCommandLine.run("--verbose", "--in-memory", "--port", "0",
                "--param", "StaleAfterSecs=5");
        assertEquals(1, run.exit(), run.err());
        List<String> lines = lines(run.err());
        assertEquals(1, lines.size(), run.err());
        assertTrue(lines.get(0).startsWith("unknown --param StaleAfterSecs; the template's parameters are: "),
                lines.get(0));
        for (String known : TestStack.template().parameterNames()) {
            assertTrue(lines.get(0).contains(known), known + " in " + lines.get(0));
        }
        assertEquals("", run.out());
    }

    @Test
    void secondLifelineLocal_inTheSameJvm_onTheSameDataDir_isRefused_untilTheFirstCloses() throws Exception {
        try (LifelineLocal first = start()) {
            StartRefusedException refused = assertThrows(StartRefusedException.class, this::start);
            assertTrue(refused.getMessage().contains("is in use by Lifeline Local process "
                    + ProcessHandle.current().pid() + ";"), refused.getMessage());
            assertEquals(200, HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(first.url().resolve("/v1/teams/local/agents"))
                            .header("Authorization", "Bearer " + first.adminKey()).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode(), "the first runs on");
        }
        try (LifelineLocal again = start()) {
            assertTrue(again.url().getPort() > 0, "the lock went with the first");
        }
    }

    private LifelineLocal start() throws Exception {
        return LifelineLocal.start(new LifelineLocal.Options(0, dataDir, TestStack.template(), Map.of(),
                Clock.systemUTC()));
    }

    private static List<String> lines(String text) {
        return text.lines().filter(l -> !l.isBlank()).toList();
    }
}
