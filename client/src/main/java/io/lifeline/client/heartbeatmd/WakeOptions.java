package io.lifeline.client.heartbeatmd;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * How {@link Wake#run} behaves. Start from {@link #defaults()} and change what you need with the {@code with*}
 * methods.
 *
 * @param lockTimeout  how long to wait for another wake's lock (default 30 s, as the heartbeat.md format)
 * @param staleAfter   a lock not refreshed for this long is broken (default 2 min); the holder refreshes it every
 *                     quarter of this
 * @param startup      true on the wake at the agent's start: {@code startup} actions run
 * @param runners      action type to runner; default {@code shell} and {@code http_check}
 * @param env          environment for {@code env:} conditions (null answers "unset"); default the real one
 * @param retryDelay   delay before the first retry, doubled for each further one, at most 1 h (default 1 min);
 *                     an action's own {@code retry_delay} field wins
 * @param keepBackups  how many {@code history/heartbeat-*.md} backups to keep (oldest removed first; default 100)
 * @param heartbeat    called once after the file is written and unlocked, with seconds until next_wake, when
 *                     there is a next_wake; null for none
 * @param budget       the wake's time budget (default 10 min): a {@code [LOW]} action runs only if what it may take
 *                     (its last recorded duration, else its timeout) fits in what is left; otherwise it stays
 *                     pending, deferred with the reason
 * @param backgroundParallelism  how many {@code [BG]} actions run at once, alongside the others (default 4)
 */
public record WakeOptions(Duration lockTimeout, Duration staleAfter, boolean startup, Map<String, ActionRunner> runners,
        Function<String, String> env, Duration retryDelay, int keepBackups, HeartbeatSender heartbeat, Duration budget,
        int backgroundParallelism) {

    /** Sends the heartbeat that tells Lifeline when to expect this agent next (the CLI passes the SDK call). */
    @FunctionalInterface
    public interface HeartbeatSender {
        void send(long nextHeartbeatWithinSeconds);
    }

    public WakeOptions {
        Objects.requireNonNull(lockTimeout);
        Objects.requireNonNull(staleAfter);
        runners = Map.copyOf(runners);
        Objects.requireNonNull(env);
        Objects.requireNonNull(retryDelay);
        Objects.requireNonNull(budget);
        if (backgroundParallelism < 1) {
            throw new IllegalArgumentException("backgroundParallelism must be at least 1");
        }
    }

    public static WakeOptions defaults() {
        return new WakeOptions(HeartbeatLock.DEFAULT_TIMEOUT, HeartbeatLock.DEFAULT_STALE_AFTER, false,
                Map.of("shell", new ShellRunner(), "http_check", new HttpCheckRunner()), System::getenv,
                Duration.ofMinutes(1), 100, null, Duration.ofMinutes(10), 4);
    }

    public WakeOptions withLockTimeout(Duration d) {
        return new WakeOptions(d, staleAfter, startup, runners, env, retryDelay, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withStaleAfter(Duration d) {
        return new WakeOptions(lockTimeout, d, startup, runners, env, retryDelay, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withStartup(boolean s) {
        return new WakeOptions(lockTimeout, staleAfter, s, runners, env, retryDelay, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withRunners(Map<String, ActionRunner> r) {
        return new WakeOptions(lockTimeout, staleAfter, startup, r, env, retryDelay, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withEnv(Function<String, String> e) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, e, retryDelay, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withRetryDelay(Duration d) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, d, keepBackups, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withKeepBackups(int n) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, n, heartbeat,
                budget, backgroundParallelism);
    }

    public WakeOptions withHeartbeat(HeartbeatSender h) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, keepBackups, h,
                budget, backgroundParallelism);
    }

    public WakeOptions withBudget(Duration d) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, keepBackups, heartbeat, d,
                backgroundParallelism);
    }

    public WakeOptions withBackgroundParallelism(int n) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, keepBackups, heartbeat,
                budget, n);
    }
}
