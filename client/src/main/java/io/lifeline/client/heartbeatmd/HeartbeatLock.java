package io.lifeline.client.heartbeatmd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The lock file {@code <file>.lock} (e.g. {@code heartbeat.md.lock}), held across processes.
 *
 * <p>Held by creating the file atomically ({@code CREATE_NEW}); it records the holder's pid, a random token and
 * when it was taken, and is deleted on {@link #close()}. While held, a daemon thread touches its modification time
 * every quarter of {@code staleAfter}, so a long wake (a shell action may run for minutes) keeps it fresh.
 *
 * <p>A waiter polls every 50 ms up to {@code timeout}, then gives up with {@link LockTimeoutException}. A lock not
 * touched for {@code staleAfter} belongs to a holder that died (kill -9, power loss); a waiter deletes it, takes the
 * lock, and says so in {@link #brokeStaleLock()}. Known gap: two waiters that both judge the same lock stale in the
 * same instant can race (one may delete the lock the other just took); staleAfter well above the refresh period
 * makes that need a dead holder and two simultaneous waiters.
 *
 * <p>Waiting is measured on the real clock ({@code System.nanoTime} and file times): it is about other processes,
 * not about the schedule's injected clock.
 */
public final class HeartbeatLock implements AutoCloseable {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofMinutes(2);
    private static final long POLL_MILLIS = 50;

    private final Path lockFile;
    private final String token;
    private final String brokeStaleLock;
    private final Duration waited;
    private final ScheduledExecutorService refresher;

    private HeartbeatLock(Path lockFile, String token, String brokeStaleLock, Duration waited, Duration staleAfter) {
        this.lockFile = lockFile;
        this.token = token;
        this.brokeStaleLock = brokeStaleLock;
        this.waited = waited;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "heartbeat-lock-refresh");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(100, staleAfter.toMillis() / 4);
        refresher.scheduleAtFixedRate(this::touch, period, period, TimeUnit.MILLISECONDS);
    }

    /** The lock file for a heartbeat.md: same folder, name plus {@code .lock}. */
    public static Path lockFileFor(Path file) {
        return file.resolveSibling(file.getFileName() + ".lock");
    }

    /**
     * @throws LockTimeoutException when another holder keeps it past {@code timeout}
     */
    public static HeartbeatLock acquire(Path file, Duration timeout, Duration staleAfter) {
        Path lockFile = lockFileFor(file);
        String token = UUID.randomUUID().toString();
        String content = "pid=" + ProcessHandle.current().pid() + " token=" + token + " acquired=" + Instant.now() + "\n";
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        String broke = null;
        while (true) {
            try {
                Files.writeString(Files.createFile(lockFile), content, StandardCharsets.UTF_8);
                return new HeartbeatLock(lockFile, token, broke, Duration.ofNanos(System.nanoTime() - start), staleAfter);
            } catch (FileAlreadyExistsException e) {
                String stale = breakIfStale(lockFile, staleAfter);
                if (stale != null) {
                    broke = stale;
                    continue;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create lock file " + lockFile, e);
            }
            if (System.nanoTime() >= deadline) {
                throw new LockTimeoutException("heartbeat.md is locked by another wake (" + holder(lockFile)
                        + ") at " + lockFile + "; gave up after " + Durations.format(timeout)
                        + ". A lock not refreshed for " + Durations.format(staleAfter)
                        + " is broken automatically; delete it by hand only if no wake is running.");
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new LockTimeoutException("interrupted while waiting for " + lockFile);
            }
        }
    }

    /** Deletes the lock if it was not refreshed for staleAfter; answers what was broken, or null. */
    private static String breakIfStale(Path lockFile, Duration staleAfter) {
        try {
            FileTime modified = Files.getLastModifiedTime(lockFile);
            long ageMillis = System.currentTimeMillis() - modified.toMillis();
            if (ageMillis < staleAfter.toMillis()) {
                return null;
            }
            String was = holder(lockFile);
            Files.deleteIfExists(lockFile);
            return "broke a stale lock (" + was + ", not refreshed for " + ageMillis / 1000 + "s)";
        } catch (NoSuchFileException e) {
            return "";
        } catch (IOException e) {
            throw new UncheckedIOException("cannot inspect lock file " + lockFile, e);
        }
    }

    private static String holder(Path lockFile) {
        try {
            return Files.readString(lockFile, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "holder unknown: " + e.getMessage();
        }
    }

    private void touch() {
        try {
            Files.setLastModifiedTime(lockFile, FileTime.fromMillis(System.currentTimeMillis()));
        } catch (IOException e) {
            // The next touch tries again; a lock that cannot be refreshed at all will look stale to waiters.
            return;
        }
    }

    /** What a stale lock that was broken to take this one said, or null when none was broken. */
    public String brokeStaleLock() {
        return brokeStaleLock == null || brokeStaleLock.isEmpty() ? null : brokeStaleLock;
    }

    /** How long acquiring waited. */
    public Duration waited() {
        return waited;
    }

    public Path lockFile() {
        return lockFile;
    }

    /** Stops refreshing and deletes the lock file, if it is still ours. */
    @Override
    public void close() {
        refresher.shutdownNow();
        try {
            if (Files.exists(lockFile) && Files.readString(lockFile, StandardCharsets.UTF_8).contains("token=" + token)) {
                Files.delete(lockFile);
            }
        } catch (NoSuchFileException e) {
            // Already gone (a waiter judged it stale): nothing to release.
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove lock file " + lockFile, e);
        }
    }
}
