package io.lifeline.client.heartbeatmd;

import io.lifeline.client.files.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One wake of a heartbeat.md, what {@code lifeline wake heartbeat.md} runs:
 * <ol>
 *   <li>take {@code heartbeat.md.lock} (waiting up to the lock timeout; a stale lock is broken and reported);</li>
 *   <li>read and parse the file. A mistake is reported with its line ({@link HeartbeatParseException}) and the
 *       file left untouched; a corrupt file ({@link HeartbeatParseException#corrupt()}) is restored from the newest
 *       backup in {@code history/} that parses, keeping the corrupt bytes as {@code history/corrupt-*.md}, and
 *       the result and a WARNING log line say so;</li>
 *   <li>copy the file to {@code history/heartbeat-YYYYMMDD-HHMMSS.md} (UTC, from the clock);</li>
 *   <li>evaluate ({@link Evaluator}) and run the due actions in priority order, re-checking dependencies just
 *       before each (so an action whose dependency completed earlier in the same wake runs); after a CRITICAL
 *       failure the rest are held back. {@code [BG]} actions start at once on a pool of
 *       {@link WakeOptions#backgroundParallelism()} threads, run alongside the others, and are awaited before the
 *       file is written (one whose dependency is not met yet is looked at again after the others have run).
 *       A {@code [LOW]} action runs only if it fits in what is left of {@link WakeOptions#budget()} (by its last
 *       {@code duration}, else its timeout); otherwise it stays pending with a {@code deferred} reason and
 *       next_wake comes within the retry delay;</li>
 *   <li>write results (seed formats) and the frontmatter, atomically; release the lock;</li>
 *   <li>call the heartbeat callback with the seconds until next_wake.</li>
 * </ol>
 * Retries happen across wakes: a failed attempt with attempts left gets {@code next_retry}, and next_wake includes
 * it, so the agent is woken for it; next_wake is never later than the earliest pending retry or due action (one that
 * fell due during the wake makes it the wake's end). Each result carries the action's {@code definition_hash}: an
 * action edited after its result, or set back to {@code status: pending}, runs afresh when due. Actions that did
 * not run are listed in the result ({@link WakeResult#heldBack()}, {@link WakeResult#notRun()}) with why and when
 * they next will.
 */
public final class Wake {
    private static final System.Logger LOG = System.getLogger(Wake.class.getName());
    /** The file is a person's too: old or new bytes, never a mix, durable, and as readable as before. */
    private static final AtomicFiles.Options WRITE = AtomicFiles.Options.of().forced().directoryForced()
            .keepingPermissions();
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);
    private static final Pattern BACKUP = Pattern.compile("heartbeat-([0-9]{8}-[0-9]{6})(?:-([0-9]+))?\\.md");

    private Wake() {
    }

    public static WakeResult run(Path file, Clock clock) {
        return run(file, clock, WakeOptions.defaults());
    }

    /**
     * @throws HeartbeatParseException when the file has a mistake, or is corrupt with no valid backup (untouched)
     * @throws LockTimeoutException    when another wake holds the lock past the timeout
     * @throws UncheckedIOException    when the file cannot be read or written
     */
    public static WakeResult run(Path file, Clock clock, WakeOptions options) {
        WakeResult result;
        try (HeartbeatLock lock = HeartbeatLock.acquire(file, options.lockTimeout(), options.staleAfter())) {
            if (lock.brokeStaleLock() != null) {
                LOG.log(System.Logger.Level.WARNING, file + ": " + lock.brokeStaleLock());
            }
            result = underLock(file, clock, options, lock.brokeStaleLock());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot wake " + file + ": " + e.getMessage(), e);
        }
        if (options.heartbeat() != null && result.nextHeartbeatWithinSeconds().isPresent()) {
            try {
                options.heartbeat().send(result.nextHeartbeatWithinSeconds().getAsLong());
            } catch (RuntimeException e) {
                // One line: the caller reports it (heartbeatError); a stack trace helps nobody here.
                LOG.log(System.Logger.Level.DEBUG, "heartbeat after wake of " + file + " failed: " + e.getMessage());
                return new WakeResult(result.wokeAt(), result.ran(), result.heldBack(), result.nextWake(),
                        result.nextHeartbeatWithinSeconds(), result.backup(), result.recovery(),
                        result.staleLockBroken(), String.valueOf(e.getMessage()), result.notRun());
            }
        }
        return result;
    }

    private static WakeResult underLock(Path file, Clock clock, WakeOptions options, String staleLock) throws IOException {
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Path baseDir = file.toAbsolutePath().getParent();
        Path history = baseDir.resolve("history");
        HeartbeatFile hb;
        String recovery = null;
        try {
            hb = HeartbeatFile.parse(decode(Files.readAllBytes(file)));
        } catch (HeartbeatParseException e) {
            if (!e.corrupt()) {
                throw e;
            }
            Path backup = latestValidBackup(history);
            if (backup == null) {
                throw HeartbeatParseException.corrupt(e.line(), e.reason() + " (corrupt, and no valid backup in "
                        + history + " to restore; the file is left as it is)");
            }
            Files.createDirectories(history);
            Path corruptCopy = unique(history, "corrupt-" + STAMP.format(now));
            Files.copy(file, corruptCopy);
            String restored = Files.readString(backup, StandardCharsets.UTF_8);
            AtomicFiles.write(file, restored, WRITE);
            hb = HeartbeatFile.parse(restored);
            recovery = file.getFileName() + " was corrupt (" + e.getMessage() + "); restored from "
                    + baseDir.relativize(backup) + "; the corrupt copy is " + baseDir.relativize(corruptCopy);
            LOG.log(System.Logger.Level.WARNING, recovery);
        }
        Files.createDirectories(history);
        Path backup = unique(history, "heartbeat-" + STAMP.format(now));
        Files.writeString(backup, hb.render(), StandardCharsets.UTF_8);
        pruneBackups(history, options.keepBackups());

        Evaluator evaluator = new Evaluator(Clock.fixed(now, ZoneOffset.UTC), options.env());
        Evaluator.Evaluation evaluation = evaluator.evaluate(hb, baseDir, options.startup());
        List<WakeResult.Attempt> ran = new ArrayList<>();
        List<WakeResult.HeldBack> heldBack = new ArrayList<>();
        Map<String, String> watchHashes = new HashMap<>();
        for (Evaluator.Decision d : evaluation.decisions()) {
            if (d.watchHash() != null) {
                watchHashes.put(d.action().id(), d.watchHash());
            }
            if (d.verdict() == Evaluator.Verdict.SKIPPED) {
                heldBack.add(new WakeResult.HeldBack(d.action().id(), d.verdict(), d.reason()));
            }
        }
        // Due and dependency-blocked actions, in priority order; dependencies are checked again just before each.
        List<Action> candidates = evaluation.decisions().stream()
                .filter(d -> d.verdict() == Evaluator.Verdict.DUE || d.verdict() == Evaluator.Verdict.BLOCKED)
                .map(Evaluator.Decision::action).sorted(Comparator.comparing(Action::priority)).toList();
        Tally tally = new Tally(ran, heldBack, watchHashes, clock, options);
        Instant started = clock.instant();
        List<Action> background = candidates.stream().filter(a -> a.priority() == Priority.BG).toList();
        ExecutorService pool = background.isEmpty() ? null : Executors.newFixedThreadPool(
                Math.min(options.backgroundParallelism(), background.size()), r -> {
                    Thread t = new Thread(r, "heartbeat-bg");
                    t.setDaemon(true);
                    return t;
                });
        try {
            // [BG]: started now, at most backgroundParallelism at once, alongside the rest; awaited before writing.
            Map<Action, Future<Done>> running = new LinkedHashMap<>();
            List<Action> laterBackground = new ArrayList<>();
            for (Action a : background) {
                if (Evaluator.unmetDependency(hb, a) == null) {
                    running.put(a, pool.submit(() -> runTimed(a, baseDir, options, clock)));
                } else {
                    laterBackground.add(a); // looked at again once the foreground has run
                }
            }
            for (Action a : candidates) {
                if (a.priority() == Priority.BG || tally.heldBackByCritical(a)) {
                    continue;
                }
                String waiting = Evaluator.unmetDependency(hb, a);
                if (waiting != null) {
                    heldBack.add(new WakeResult.HeldBack(a.id(), Evaluator.Verdict.BLOCKED, waiting));
                    continue;
                }
                if (a.priority() == Priority.LOW) {
                    String noTime = noTimeFor(a, options.budget().minus(Duration.between(started, clock.instant())));
                    if (noTime != null) {
                        // Stays pending: it runs on a later wake with time for it.
                        a.set("deferred", noTime);
                        tally.deferred = true;
                        heldBack.add(new WakeResult.HeldBack(a.id(), Evaluator.Verdict.DEFERRED, noTime));
                        continue;
                    }
                }
                tally.record(a, runTimed(a, baseDir, options, clock));
            }
            for (Action a : laterBackground) {
                if (tally.heldBackByCritical(a)) {
                    continue;
                }
                String waiting = Evaluator.unmetDependency(hb, a);
                if (waiting != null) {
                    heldBack.add(new WakeResult.HeldBack(a.id(), Evaluator.Verdict.BLOCKED, waiting));
                } else {
                    running.put(a, pool.submit(() -> runTimed(a, baseDir, options, clock)));
                }
            }
            for (Map.Entry<Action, Future<Done>> r : running.entrySet()) {
                tally.record(r.getKey(), await(r.getValue(), clock));
            }
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
        String lastError = tally.lastError;

        Instant end = clock.instant().truncatedTo(ChronoUnit.SECONDS);
        Instant nextWake = null;
        Set<String> ranIds = new HashSet<>();
        ran.forEach(r -> ranIds.add(r.actionId()));
        Set<String> heldIds = new HashSet<>();
        heldBack.forEach(h -> heldIds.add(h.actionId()));
        List<WakeResult.NotRun> notRun = new ArrayList<>();
        for (Action a : hb.actions()) {
            Instant due = Evaluator.dueAt(a, now, end, false, watchHashes.get(a.id()));
            // Due by the end of this wake (a retry that fell due while it ran, an action that became due meanwhile):
            // the next wake is now. Not for one held back in this wake (condition, dependency, CRITICAL failure,
            // budget): those wait on something else, which brings its own next wake.
            Instant wake = due == null ? null : due.isAfter(end) ? due : heldIds.contains(a.id()) ? null : end;
            if (wake != null && (nextWake == null || wake.isBefore(nextWake))) {
                nextWake = wake;
            }
            if (!ranIds.contains(a.id()) && !heldIds.contains(a.id())) {
                notRun.add(new WakeResult.NotRun(a.id(), Evaluator.notRunReason(a, due), due));
            }
        }
        if (tally.deferred) {
            // A [LOW] action left for lack of time is still due: come back soon for it.
            Instant soon = end.plus(options.retryDelay());
            nextWake = nextWake == null || soon.isBefore(nextWake) ? soon : nextWake;
        }
        // A wake with a failure is an error (error_count counts such wakes in a row); a wake whose attempts all
        // succeeded clears it; a wake that ran nothing leaves status and error_count as they were.
        boolean failed = ran.stream().anyMatch(r -> !r.success());
        hb.setFrontmatter("last_wake", now.toString());
        hb.setFrontmatter("next_wake", nextWake == null ? null : nextWake.toString());
        if (failed || !ran.isEmpty() || hb.status() == null) {
            hb.setFrontmatter("status", failed ? HeartbeatFile.STATUS_ERROR : HeartbeatFile.STATUS_IDLE);
            hb.setFrontmatter("error_count", failed ? Math.min(hb.errorCount() + 1, HeartbeatFile.MAX_ERROR_COUNT) : 0);
        } else if (!hb.frontmatter().containsKey("error_count")) {
            hb.setFrontmatter("error_count", 0);
        }
        if (failed || !hb.frontmatter().containsKey("last_error")) {
            hb.setFrontmatter("last_error", lastError);
        }
        hb.setFrontmatter("config_hash", hb.computeConfigHash());
        AtomicFiles.write(file, hb.render(), WRITE);

        // Whole seconds, rounded up, without going through milliseconds (a next_wake far ahead would overflow them).
        Duration until = nextWake == null ? null : Duration.between(end, nextWake);
        OptionalLong within = until == null ? OptionalLong.empty()
                : OptionalLong.of(Math.max(1, until.getSeconds() + (until.getNano() > 0 ? 1 : 0)));
        return new WakeResult(now, List.copyOf(ran), List.copyOf(heldBack), nextWake, within, backup, recovery,
                staleLock, null, List.copyOf(notRun));
    }

    /** An attempt's outcome and when it ended. */
    private record Done(ActionRunner.Outcome outcome, Instant at) {
    }

    private static Done runTimed(Action a, Path baseDir, WakeOptions options, Clock clock) {
        ActionRunner.Outcome outcome = runOne(a, baseDir, options);
        return new Done(outcome, clock.instant().truncatedTo(ChronoUnit.SECONDS));
    }

    private static Done await(Future<Done> f, Clock clock) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Done(new ActionRunner.Outcome(false, "Interrupted before it finished", Duration.ZERO),
                    clock.instant().truncatedTo(ChronoUnit.SECONDS));
        } catch (ExecutionException e) {
            return new Done(new ActionRunner.Outcome(false, ActionRunner.oneLine("Runner error: " + e.getCause()),
                    Duration.ZERO), clock.instant().truncatedTo(ChronoUnit.SECONDS));
        }
    }

    /**
     * Why a [LOW] action does not fit in {@code left} of the wake's budget, or null when it does. What it may take
     * is its last recorded {@code duration}, else its timeout (the most an attempt may take).
     */
    static String noTimeFor(Action a, Duration left) {
        Duration need = Durations.parseElapsed(a.field("duration"));
        String what = "its last run took " + a.field("duration");
        if (need == null) {
            need = a.timeout();
            what = "its timeout is " + Durations.format(need);
        }
        if (need.compareTo(left) <= 0) {
            return null;
        }
        return "deferred: not enough of the wake's time budget left (" + Durations.format(left.isNegative()
                ? Duration.ZERO : left.truncatedTo(ChronoUnit.SECONDS)) + "; " + what + ")";
    }

    /** Writes attempts back (seed formats) as they are collected, and keeps the wake's running totals. */
    private static final class Tally {
        final List<WakeResult.Attempt> ran;
        final List<WakeResult.HeldBack> heldBack;
        final Map<String, String> watchHashes;
        final Clock clock;
        final WakeOptions options;
        String criticalFailure;
        String lastError;
        boolean deferred;

        Tally(List<WakeResult.Attempt> ran, List<WakeResult.HeldBack> heldBack, Map<String, String> watchHashes,
              Clock clock, WakeOptions options) {
            this.ran = ran;
            this.heldBack = heldBack;
            this.watchHashes = watchHashes;
            this.clock = clock;
            this.options = options;
        }

        /** True (and recorded) when a CRITICAL failure earlier in this wake holds {@code a} back. */
        boolean heldBackByCritical(Action a) {
            if (criticalFailure == null) {
                return false;
            }
            heldBack.add(new WakeResult.HeldBack(a.id(), Evaluator.Verdict.BLOCKED,
                    "CRITICAL action " + criticalFailure + " failed earlier in this wake"));
            return true;
        }

        void record(Action a, Done done) {
            ActionRunner.Outcome outcome = done.outcome();
            // What a runner says is written as one clean line whatever it holds (colour codes, line separators).
            String message = ActionRunner.oneLine(outcome.message());
            Instant at = done.at();
            int attempt = Evaluator.attemptsSoFar(a) + 1;
            a.remove("deferred");
            if (outcome.success()) {
                a.set("status", ActionStatus.COMPLETED.label());
                a.set("completed_at", at.toString());
                a.set("duration", Durations.formatElapsed(outcome.elapsed()));
                a.set("result", message);
                for (String key : List.of("failed_at", "error", "retry_count", "next_retry")) {
                    a.remove(key);
                }
            } else {
                a.set("status", ActionStatus.FAILED.label());
                a.set("failed_at", at.toString());
                a.set("error", message);
                a.set("retry_count", attempt + "/" + a.maxAttempts());
                if (attempt < a.maxAttempts()) {
                    Duration base = a.field("retry_delay") != null && Durations.parse(a.field("retry_delay")) != null
                            ? Durations.parse(a.field("retry_delay")) : options.retryDelay();
                    a.set("next_retry", at.plus(Evaluator.retryDelay(base, attempt)).toString());
                } else {
                    a.remove("next_retry");
                }
                for (String key : List.of("completed_at", "duration", "result")) {
                    a.remove(key);
                }
                lastError = TextLine.oneLine(a.id() + ": " + message);
                if (a.priority() == Priority.CRITICAL) {
                    criticalFailure = a.id();
                }
            }
            if (a.field("last_run") != null) {
                a.set("last_run", at.toString());
            }
            // What the action was when a result that holds it back was made (a failure, or the completion of a one-shot
            // action): an edit after it makes the action run afresh. A recurring action's completion holds nothing
            // back (it runs again on its schedule), so its block stays in the heartbeat.md format.
            if (!outcome.success() || !a.schedule().recurring()) {
                a.set("definition_hash", a.definitionHash());
            } else {
                a.remove("definition_hash");
            }
            if (watchHashes.containsKey(a.id())) {
                a.set("watched_hash", watchHashes.get(a.id()));
            }
            ran.add(new WakeResult.Attempt(a.id(), a.priority(), outcome.success(), message, attempt,
                    a.maxAttempts()));
        }
    }

    private static ActionRunner.Outcome runOne(Action a, Path baseDir, WakeOptions options) {
        ActionRunner runner = options.runners().get(a.type());
        if (runner == null) {
            return new ActionRunner.Outcome(false, "unknown action type '" + a.type() + "'; this runner knows "
                    + String.join(", ", options.runners().keySet().stream().sorted().toList()), Duration.ZERO);
        }
        try {
            return runner.run(a, baseDir);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "runner for " + a.id() + " threw", e);
            return new ActionRunner.Outcome(false, ActionRunner.oneLine("Runner error: " + e), Duration.ZERO);
        }
    }

    /** Strict UTF-8: bytes that are not UTF-8 make the file corrupt, naming the line they are on. */
    static String decode(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return failDecode(bytes);
        }
    }

    private static String failDecode(byte[] bytes) {
        int line = 1;
        int i = 0;
        while (i < bytes.length) {
            int end = i;
            while (end < bytes.length && bytes[end] != '\n') {
                end++;
            }
            try {
                StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes, i, end - i));
            } catch (CharacterCodingException e) {
                throw HeartbeatParseException.corrupt(line, "bytes that are not UTF-8 text");
            }
            i = end + 1;
            line++;
        }
        throw HeartbeatParseException.corrupt(1, "bytes that are not UTF-8 text");
    }

    /** history/{prefix}.md, or {prefix}-1.md, -2... when taken (several wakes in one second). */
    private static Path unique(Path history, String prefix) throws IOException {
        Path p = history.resolve(prefix + ".md");
        int n = 0;
        try (Stream<Path> files = Files.list(history)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.equals(prefix + ".md")) {
                    n = Math.max(n, 1);
                } else if (name.startsWith(prefix + "-") && name.endsWith(".md")) {
                    String suffix = name.substring(prefix.length() + 1, name.length() - 3);
                    if (suffix.matches("[0-9]{1,6}")) {
                        n = Math.max(n, Integer.parseInt(suffix) + 1);
                    }
                }
            }
        }
        // After the newest of this second, even when older ones were pruned, so names keep sorting by age.
        return n == 0 ? p : history.resolve(prefix + "-" + n + ".md");
    }

    /** Backups newest first: by the stamp in the name, then the -n suffix. */
    private static List<Path> backups(Path history) throws IOException {
        if (!Files.isDirectory(history)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(history)) {
            return files.filter(p -> BACKUP.matcher(p.getFileName().toString()).matches())
                    .sorted(Comparator.comparing(Wake::backupKey).reversed()).toList();
        }
    }

    private static String backupKey(Path p) {
        Matcher m = BACKUP.matcher(p.getFileName().toString());
        m.matches();
        return m.group(1) + String.format("%06d", m.group(2) == null ? 0 : Integer.parseInt(m.group(2)));
    }

    private static Path latestValidBackup(Path history) throws IOException {
        for (Path p : backups(history)) {
            try {
                HeartbeatFile.parse(decode(Files.readAllBytes(p)));
                return p;
            } catch (HeartbeatParseException e) {
                LOG.log(System.Logger.Level.INFO, "backup " + p + " is not valid either: " + e.getMessage());
            }
        }
        return null;
    }

    private static void pruneBackups(Path history, int keep) throws IOException {
        List<Path> all = backups(history);
        for (int i = keep; i < all.size(); i++) {
            Files.deleteIfExists(all.get(i));
        }
    }
}
