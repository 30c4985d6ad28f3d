package io.lifeline.client.daemon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link StreamSilence} on this machine's real kernel: a child in a session of its own holds a TCP connection to
 * this test; while the test sends nothing the session's silence grows past what it waited, and a byte sent brings
 * it back under a second. Also what one sample costs the daemon's JVM (the {@code ss} call's own CPU is measured
 * apart, docs/daemon.md).
 */
@Tag("e2e")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamSilenceTest {

    @Test
    void parse_takesEachConnectionsInodeAndLastReceive() {
        String ss = """
                0      0      127.0.0.1:45844 127.0.0.1:48319 ino:1504874 sk:7 cgroup:/ <->
                \t ts sack bbr wscale:10,10 rto:200 rtt:0.03/0.015 bytes_received:1 send 87381333333bps lastsnd:1212 \
                lastrcv:1212 lastack:1212 pacing_rate 249517099808bps
                0      0      127.0.0.1:48319 127.0.0.1:45844 ino:1504875 sk:8 cgroup:/ <->
                \t ts sack bbr wscale:10,10 rto:204 bytes_sent:1 lastsnd:90 lastrcv:35 lastack:35
                0      0      127.0.0.1:5000 127.0.0.1:5001 ino:0 sk:9 <->
                \t ts sack lastrcv:7
                """;
        assertEquals(Map.of(1504874L, 1212L, 1504875L, 35L, 0L, 7L), StreamSilence.parse(ss));
        assertTrue(StreamSilence.parse("").isEmpty());
    }

    @Test
    void sample_isTheSessionsTimeSinceItsConnectionLastReceived() throws Exception {
        assumeTrue(StreamSilence.available(), "needs /proc and ss");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")) && Files.isExecutable(Path.of("/usr/bin/setsid")),
                "needs python3 and setsid for the child");
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Process child = new ProcessBuilder("setsid", "python3", "-c", "import socket,sys,time\n"
                    + "s=socket.create_connection(('127.0.0.1'," + server.getLocalPort() + "))\n"
                    + "while s.recv(1): pass\n").redirectErrorStream(true).start();
            try (Socket conn = server.accept(); OutputStream out = conn.getOutputStream()) {
                long sid = child.pid(); // setsid from a non-leader: the child is its session's leader
                out.write('x');
                out.flush();
                Thread.sleep(1500);
                Long silent = StreamSilence.sample(List.of(sid)).get(sid);
                assertTrue(silent != null && silent >= 1400 && silent < 30_000, "silence " + silent + " ms");
                out.write('y');
                out.flush();
                Thread.sleep(100);
                Long after = StreamSilence.sample(List.of(sid)).get(sid);
                assertTrue(after != null && after < 1000, "after a byte: " + after + " ms");
                assertFalse(StreamSilence.sample(List.of(ProcessHandle.current().pid() + 1_000_000L)).containsKey(sid));

                ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
                int n = 20;
                long c0 = cpu.getCurrentThreadCpuTime();
                long w0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    StreamSilence.sample(List.of(sid));
                }
                System.out.printf("one progress sample (one ss call, one /proc walk of %d processes): %.1f ms wall,"
                        + " %.1f ms of the daemon's CPU%n", ProcessHandle.allProcesses().count(),
                        (System.nanoTime() - w0) / 1e6 / n, (cpu.getCurrentThreadCpuTime() - c0) / 1e6 / n);
            } finally {
                child.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void sample_ofTwentyFiveSessions_findsEach_andItsCostIsMeasured() throws Exception {
        assumeTrue(StreamSilence.available(), "needs /proc and ss");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")) && Files.isExecutable(Path.of("/usr/bin/setsid")),
                "needs python3 and setsid for the children");
        int agents = 25;
        List<Process> children = new ArrayList<>();
        List<Socket> conns = new ArrayList<>();
        try (ServerSocket server = new ServerSocket(0, agents, InetAddress.getLoopbackAddress())) {
            for (int i = 0; i < agents; i++) {
                children.add(new ProcessBuilder("setsid", "python3", "-c", "import socket\n"
                        + "s=socket.create_connection(('127.0.0.1'," + server.getLocalPort() + "))\n"
                        + "while s.recv(1): pass\n").redirectErrorStream(true).start());
                conns.add(server.accept());
            }
            List<Long> sessions = children.stream().map(Process::pid).toList();
            assertEquals(agents, StreamSilence.sample(sessions).size(), "every session's connection is found");
            // The daemon's whole CPU, its ss children's included (/proc/self/stat: utime, stime, cutime, cstime).
            for (int k : new int[] {1, agents}) {
                int n = 40;
                long c0 = processCpuTicks();
                long w0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    StreamSilence.sample(sessions.subList(0, k));
                }
                double ms = (processCpuTicks() - c0) * 10.0 / n;
                System.out.printf("progress sample of %d agent(s) (one ss call, one /proc walk of %d processes): "
                        + "%.1f ms wall, %.1f ms CPU with ss's (%.2f ms per agent); every 3 s: %.2f %% of a core%n", k,
                        ProcessHandle.allProcesses().count(), (System.nanoTime() - w0) / 1e6 / n, ms, ms / k,
                        ms / 3000 * 100);
            }
        } finally {
            for (Socket c : conns) {
                c.close();
            }
            for (Process c : children) {
                c.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    /** This JVM's CPU and its waited-for children's, in clock ticks (10 ms). */
    private static long processCpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
    }
}
