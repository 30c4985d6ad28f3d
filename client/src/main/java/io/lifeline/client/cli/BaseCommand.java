package io.lifeline.client.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineConnectionException;
import io.lifeline.client.LifelineException;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.Sleeper;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** What every command shares: the connection, output, and turning errors into exit codes. */
abstract class BaseCommand implements Callable<Integer> {
    @Mixin
    GlobalOptions global;

    @Spec
    CommandSpec spec;

    private LifelineClient client;

    @Override
    public final Integer call() {
        try {
            global.file(env()); // a bad config file is reported before anything is sent
            warnOfAnAdminKeyFlag();
            return run();
        } catch (ConfigFile.ConfigException e) {
            err().println("lifeline: " + e.getMessage());
            return LifelineCli.USAGE;
        } catch (LifelineApiException e) {
            err().println("lifeline: refused: " + e.code() + " (HTTP " + e.status() + "): " + e.getMessage());
            return LifelineCli.REFUSED;
        } catch (LifelineConnectionException e) {
            err().println("lifeline: " + e.getMessage());
            return LifelineCli.UNREACHABLE;
        } catch (LifelineException e) {
            err().println("lifeline: " + e.getMessage());
            return LifelineCli.REFUSED;
        } catch (UncheckedIOException e) {
            err().println("lifeline: " + e.getMessage());
            return LifelineCli.REFUSED;
        }
    }

    abstract int run() throws LifelineException;

    /**
     * A key given with {@code --key} is on the command line, where every user of the machine reads it ({@code ps},
     * {@code /proc/PID/cmdline}) and the shell's history keeps it. For an admin key (one that may list the team's
     * keys: one read, which fails fast and says nothing when Lifeline does not answer) that is said on stderr.
     */
    private void warnOfAnAdminKeyFlag() {
        if (global.key == null || global.key.isBlank()) {
            return;
        }
        try {
            global.client(env(), sleeper(), global.team(env()), global.key, null, true).keys();
        } catch (LifelineException | IllegalArgumentException | ConfigFile.ConfigException e) {
            return; // not an admin key, or nothing to ask
        }
        err().println("lifeline: warning: --key puts an admin key on the command line, where every user of this "
                + "machine can read it (ps) and the shell's history keeps it: set LIFELINE_API_KEY, or api_key in the "
                + "config file (chmod 600), instead");
        err().flush();
    }

    /** The {@code lifeline} command this runs under (commands may be nested, e.g. {@code tasks list}). */
    private LifelineCli root() {
        return spec.root().userObject() instanceof LifelineCli cli ? cli : null;
    }

    Map<String, String> env() {
        LifelineCli root = root();
        return root == null ? LifelineCli.environment() : root.env;
    }

    Path workDir() {
        LifelineCli root = root();
        return root == null ? Path.of("") : root.workDir;
    }

    Sleeper sleeper() {
        LifelineCli root = root();
        return root == null ? Sleeper.REAL : root.sleeper;
    }

    LifelineClient client() {
        if (client == null) {
            client = global.client(env(), sleeper(), global.team(env()), global.key(env()), this::retrying,
                    readsFailFast(), retryPolicy());
        }
        return client;
    }

    /**
     * Whether a read that finds nobody at the URL fails at once ("is Lifeline Local running? Start it with ...")
     * instead of retrying for 14 s: yes for a command a person waits for; a long-running one overrides it.
     */
    boolean readsFailFast() {
        return true;
    }

    /**
     * The client's retries: the SDK's defaults (a throttle 2 s, 4 s, 8 s; a function that did not answer, 502 or 504,
     * about ten minutes, so a command rides out a SnapStart version made ready again); a command that tries again on
     * its own schedule overrides it.
     */
    RetryPolicy retryPolicy() {
        return RetryPolicy.defaults();
    }

    /** A heartbeat's answer, and whether the agent had to join again first. */
    record Beat(HeartbeatResult result, boolean rejoined) {
    }

    /**
     * Sends a heartbeat; when the server answers rejoinRequired (and {@code rejoin} allows it) the agent joins
     * and the heartbeat is sent again (self-healing, the status model).
     */
    Beat heartbeat(String agentId, Heartbeat hb, boolean rejoin) {
        try {
            return new Beat(client().heartbeat(agentId, hb), false);
        } catch (LifelineApiException e) {
            if (!rejoin || !e.rejoinRequired()) {
                throw e;
            }
            client().join(agentId);
            return new Beat(client().heartbeat(agentId, hb), true);
        }
    }

    /** A retry, said at once on stderr ("cannot reach URL (why), retrying in 2 s ..."), not after the last one. */
    void retrying(String notice) {
        err().println("lifeline: " + notice);
        err().flush();
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** Prints {@code answer} as JSON with --json, else {@code human}; answers 0. */
    int print(Object answer, String human) {
        if (global.json) {
            try {
                out().println(LifelineClient.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(answer));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        } else {
            out().println(human);
        }
        out().flush();
        return 0;
    }

    /** "12s ago" / "in 40s" / "-". */
    static String relative(Instant t, Instant now) {
        if (t == null) {
            return "-";
        }
        long s = Duration.between(t, now).toSeconds();
        return s >= 0 ? human(s) + " ago" : "in " + human(-s);
    }

    static String human(long seconds) {
        if (seconds < 120) {
            return seconds + "s";
        }
        if (seconds < 7200) {
            return (seconds / 60) + "m";
        }
        if (seconds < 172800) {
            return (seconds / 3600) + "h";
        }
        return (seconds / 86400) + "d";
    }

    /** "500ms", "2s", "1m", or plain seconds. */
    static Duration duration(String text) {
        String t = text.trim().toLowerCase();
        if (t.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (t.endsWith("s")) {
            return Duration.ofMillis((long) (Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
        }
        if (t.endsWith("m")) {
            return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)) * 60);
        }
        return Duration.ofMillis((long) (Double.parseDouble(t) * 1000));
    }
}
