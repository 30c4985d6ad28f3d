package io.lifeline.local.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.e2e.ChildLocal;
import io.lifeline.local.e2e.LocalCommandLine;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Lifeline Local refuses, on a real process ({@code LocalMain} in a child JVM, as {@code java -jar} runs
 * it): every socket it listens on is on a loopback address (its listening sockets read from /proc, mapped to the
 * process through its file descriptors), the store has no port, and its data dir is held: the lock file is
 * owner-only and names the pid, and a second Local or a bootstrap command on that data dir is refused in one
 * line naming that pid, with a non-zero exit and no stack trace.
 */
@EnabledOnOs(OS.LINUX)
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("e2e")
class LocalProcessGuardsTest {
    @TempDir
    static Path dataDir;

    static ChildLocal child;
    static Process local;
    static URI url;
    static List<String> OUTPUT = List.of();

    @BeforeAll
    static void startLocal() throws Exception {
        child = ChildLocal.start("256m", "--port", "0", "--data-dir", dataDir.toString())
                .awaitRunning(Duration.ofSeconds(60), false);
        local = child.process();
        url = child.url();
        OUTPUT = child.output();
    }

    @AfterAll
    static void stopLocal() throws Exception {
        if (child != null) {
            child.close();
        }
    }

    static List<String> javaCommand(String... args) {
        return ChildLocal.command("256m", args);
    }

    @Test
    void listeningSockets_ofARunningLocal_areAllOnLoopback_andTheStoreHasNone() throws Exception {
        List<InetSocketAddress> sockets = listeningSockets(local.pid());
        assertTrue(sockets.stream().anyMatch(s -> s.getPort() == url.getPort()),
                "the front door (port " + url.getPort() + ") is among " + sockets);
        for (InetSocketAddress socket : sockets) {
            assertTrue(socket.getAddress().isLoopbackAddress(), "listens beyond loopback: " + socket);
        }
        // The front door, the event bus, the Step Functions and the SQS (sweep queue) stand-ins; the store (the engine) runs
        // in-process.
        assertEquals(4, sockets.size(), sockets.toString());
    }

    @Test
    void lockFile_ofARunningLocal_isOwnerOnly_andNamesItsPid() throws Exception {
        Path lock = dataDir.resolve(DataDirLock.FILE);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lock)));
        assertEquals(Long.toString(local.pid()), Files.readString(lock).strip());
    }

    @Test
    void secondLocal_onTheSameDataDir_isRefusedInOneLineNamingThePid() throws Exception {
        Process second = new ProcessBuilder(javaCommand("--port", "0", "--data-dir", dataDir.toString()))
                .redirectErrorStream(true).start();
        String out;
        try (var in = second.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(second.waitFor(60, TimeUnit.SECONDS), "the second Local ended");
        assertEquals(1, second.exitValue(), out);
        assertOneLineNaming(out, "process " + local.pid() + ";");
        assertTrue(local.isAlive(), "the first Local runs on");
    }

    @Test
    void bootstrapCommands_onAHeldDataDir_areRefusedInOneLineNamingThePid() throws Exception {
        for (String[] args : List.of(new String[] {"--data-dir", dataDir.toString(), "create-team", "other"},
                new String[] {"--data-dir", dataDir.toString(), "create-operator-key"})) {
            LocalCommandLine.Run run = LocalCommandLine.run(args);
            assertEquals(1, run.exit(), run.err());
            assertEquals("", run.out());
            assertOneLineNaming(run.err(), "process " + local.pid() + ";");
        }
    }

    static void assertOneLineNaming(String output, String expected) {
        List<String> lines = output.lines().filter(l -> !l.isBlank()).toList();
        assertEquals(1, lines.size(), "one line: " + output);
        assertTrue(lines.get(0).contains(expected), lines.get(0));
        assertTrue(lines.get(0).contains("is in use"), lines.get(0));
        assertFalse(output.contains("Exception") || output.contains("\tat "), output);
    }

    /**
     * The TCP sockets process {@code pid} listens on: the LISTEN rows of /proc/net/tcp and /proc/net/tcp6 whose
     * inode is one of the process's file descriptors.
     */
    static List<InetSocketAddress> listeningSockets(long pid) throws IOException {
        Set<String> inodes = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (IOException closedMeanwhile) {
                    continue;
                }
                if (target.startsWith("socket:[")) {
                    inodes.add(target.substring("socket:[".length(), target.length() - 1));
                }
            }
        }
        List<InetSocketAddress> listening = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> rows = Files.readAllLines(Path.of(table));
            for (String row : rows.subList(1, rows.size())) {
                String[] f = row.trim().split("\\s+");
                // f[1] local address:port, f[3] state (0A = LISTEN), f[9] inode
                if ("0A".equals(f[3]) && inodes.contains(f[9])) {
                    String[] local = f[1].split(":");
                    listening.add(new InetSocketAddress(InetAddress.getByAddress(address(local[0])),
                            Integer.parseInt(local[1], 16)));
                }
            }
        }
        return listening;
    }

    /** /proc/net prints an address as 32-bit words, each in the host's (little-endian) byte order. */
    static byte[] address(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = (word * 4 + 3 - i) * 2;
                bytes[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        return bytes;
    }

    @Test
    void address_decodesProcNetRows() throws Exception {
        assertEquals(InetAddress.getByName("127.0.0.1"), InetAddress.getByAddress(address("0100007F")));
        assertEquals(InetAddress.getByName("::1"),
                InetAddress.getByAddress(address("00000000000000000000000001000000")));
        assertEquals(InetAddress.getByName("0.0.0.0"), InetAddress.getByAddress(address("00000000")));
        assertFalse(InetAddress.getByAddress(address("00000000000000000000000000000000")).isLoopbackAddress());
    }
}
