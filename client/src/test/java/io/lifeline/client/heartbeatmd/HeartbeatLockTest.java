package io.lifeline.client.heartbeatmd;

import io.lifeline.testing.MutableClock;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("e2e")
class HeartbeatLockTest {
    @TempDir
    Path dir;

    private Process holder;

    @AfterEach
    void stopHolder() throws Exception {
        if (holder != null && holder.isAlive()) {
            holder.destroyForcibly();
            holder.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts a second JVM that holds the lock for holdMillis, and returns once it says LOCKED. */
    private void startHolder(Path file, long holdMillis) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        holder = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                LockHolderMain.class.getName(), file.toString(), Long.toString(holdMillis)))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertNotNull(line, "lock holder exited without taking the lock");
        assertTrue(line.startsWith("LOCKED"), line);
    }

    @Test
    void acquire_whileOtherProcessHolds_timesOutWithClearError() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        startHolder(file, 30_000);
        LockTimeoutException e = assertThrows(LockTimeoutException.class,
                () -> HeartbeatLock.acquire(file, Duration.ofMillis(500), Duration.ofMinutes(2)));
        assertTrue(e.getMessage().startsWith("heartbeat.md is locked by another wake (pid=" + holder.pid()), e.getMessage());
        assertTrue(e.getMessage().contains("heartbeat.md.lock; gave up after 500ms"), e.getMessage());
    }

    @Test
    void wake_whileOtherProcessHolds_timesOutAndLeavesFileUntouched() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Files.writeString(file, Fixtures.seed("seed-minimal.md"));
        startHolder(file, 30_000);
        assertThrows(LockTimeoutException.class, () -> Wake.run(file,
                new MutableClock(Instant.parse("2024-01-15T10:00:00Z")),
                WakeOptions.defaults().withLockTimeout(Duration.ofMillis(300))));
        assertEquals(Fixtures.seed("seed-minimal.md"), Files.readString(file));
    }

    @Test
    void acquire_otherProcessReleases_proceedsAfterWaiting() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        startHolder(file, 1_000);
        try (HeartbeatLock lock = HeartbeatLock.acquire(file, Duration.ofSeconds(30), Duration.ofMinutes(2))) {
            assertTrue(lock.waited().toMillis() > 0);
            assertNull(lock.brokeStaleLock());
            assertTrue(Files.readString(lock.lockFile()).startsWith("pid=" + ProcessHandle.current().pid()));
        }
        assertTrue(holder.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, holder.exitValue());
        assertFalse(Files.exists(HeartbeatLock.lockFileFor(file)));
    }

    @Test
    void acquire_lockNotRefreshedForStaleAfter_breaksItAndSaysSo() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        Path lockFile = HeartbeatLock.lockFileFor(file);
        Files.writeString(lockFile, "pid=999999 token=dead acquired=2024-01-15T10:00:00Z\n");
        Files.setLastModifiedTime(lockFile, FileTime.fromMillis(System.currentTimeMillis() - 600_000));
        try (HeartbeatLock lock = HeartbeatLock.acquire(file, Duration.ofSeconds(1), Duration.ofMinutes(2))) {
            assertNotNull(lock.brokeStaleLock());
            assertTrue(lock.brokeStaleLock().startsWith("broke a stale lock (pid=999999"), lock.brokeStaleLock());
        }
    }

    @Test
    void acquire_heldLockIsRefreshed_notStaleToOthers() throws Exception {
        Path file = dir.resolve("heartbeat.md");
        try (HeartbeatLock lock = HeartbeatLock.acquire(file, Duration.ofSeconds(1), Duration.ofMillis(400))) {
            Files.setLastModifiedTime(lock.lockFile(), FileTime.fromMillis(System.currentTimeMillis() - 10_000));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.currentTimeMillis() - Files.getLastModifiedTime(lock.lockFile()).toMillis() > 1_000
                    && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertTrue(System.currentTimeMillis() - Files.getLastModifiedTime(lock.lockFile()).toMillis() < 1_000,
                    "the holder touches its lock");
        }
    }
}
