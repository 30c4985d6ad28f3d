package io.lifeline.client.heartbeatmd;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * How {@link Wake#run} behaves. Start from {@link #defaults()} and change what you need with the {@code with*}
 * methods.
 *
 * @param lockTimeout  how long to wait for another wake's lock (default 30 s, as seed 003)
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
 */
public record WakeOptions(Duration lockTimeout, Duration staleAfter, boolean startup, Map<String, ActionRunner> runners,
        Function<String, String> env, Duration retryDelay, int keepBackups, HeartbeatSender heartbeat) {

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
    }

    public static WakeOptions defaults() {
        return new WakeOptions(HeartbeatLock.DEFAULT_TIMEOUT, HeartbeatLock.DEFAULT_STALE_AFTER, false,
                Map.of("shell", new ShellRunner(), "http_check", new HttpCheckRunner()), System::getenv,
                Duration.ofMinutes(1), 100, null);
    }

    public WakeOptions withLockTimeout(Duration d) {
        return new WakeOptions(d, staleAfter, startup, runners, env, retryDelay, keepBackups, heartbeat);
    }

    public WakeOptions withStaleAfter(Duration d) {
        return new WakeOptions(lockTimeout, d, startup, runners, env, retryDelay, keepBackups, heartbeat);
    }

    public WakeOptions withStartup(boolean s) {
        return new WakeOptions(lockTimeout, staleAfter, s, runners, env, retryDelay, keepBackups, heartbeat);
    }

    public WakeOptions withRunners(Map<String, ActionRunner> r) {
        return new WakeOptions(lockTimeout, staleAfter, startup, r, env, retryDelay, keepBackups, heartbeat);
    }

    public WakeOptions withEnv(Function<String, String> e) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, e, retryDelay, keepBackups, heartbeat);
    }

    public WakeOptions withRetryDelay(Duration d) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, d, keepBackups, heartbeat);
    }

    public WakeOptions withKeepBackups(int n) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, n, heartbeat);
    }

    public WakeOptions withHeartbeat(HeartbeatSender h) {
        return new WakeOptions(lockTimeout, staleAfter, startup, runners, env, retryDelay, keepBackups, h);
    }
}
