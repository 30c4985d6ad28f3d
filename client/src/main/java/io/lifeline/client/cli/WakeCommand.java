package io.lifeline.client.cli;

import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineException;
import io.lifeline.client.heartbeatmd.HeartbeatParseException;
import io.lifeline.client.heartbeatmd.LockTimeoutException;
import io.lifeline.client.heartbeatmd.Wake;
import io.lifeline.client.heartbeatmd.WakeOptions;
import io.lifeline.client.heartbeatmd.WakeResult;
import io.lifeline.client.model.Heartbeat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * One wake of a heartbeat.md agent: runs the due actions, writes the results back, and sends a
 * heartbeat whose {@code nextHeartbeatWithinSeconds} follows next_wake, so the server expects the agent on
 * its own schedule. With no agent id it runs the file without telling Lifeline.
 */
@Command(name = "wake", mixinStandardHelpOptions = true,
        description = "Run the due actions of a heartbeat.md file and heartbeat until its next wake.")
final class WakeCommand extends BaseCommand {
    @Parameters(paramLabel = "FILE", defaultValue = "heartbeat.md", description = "The heartbeat.md (default ${DEFAULT-VALUE})")
    Path file;

    @Option(names = "--agent", description = "The agent to heartbeat for (omit to run without Lifeline)")
    String agentId;

    @Option(names = "--startup", description = "This wake is the agent's start: run 'startup' actions")
    boolean startup;

    @Option(names = "--lock-timeout", description = "Seconds to wait for the file's lock (default ${DEFAULT-VALUE})")
    long lockTimeoutSeconds = 30;

    @Option(names = "--budget", description = "The wake's time budget: [LOW] actions run only if they fit in what is "
            + "left (e.g. 90s, 10m; default ${DEFAULT-VALUE})")
    String budget = "10m";

    @Option(names = "--bg-parallelism", description = "[BG] actions run at once, alongside the rest (default "
            + "${DEFAULT-VALUE})")
    int bgParallelism = 4;

    @Override
    int run() throws LifelineException {
        Duration budgetTime;
        try {
            budgetTime = duration(budget);
        } catch (NumberFormatException e) {
            err().println("lifeline: --budget takes a duration such as 90s or 10m, not '" + budget + "'");
            return LifelineCli.USAGE;
        }
        if (bgParallelism < 1) {
            err().println("lifeline: --bg-parallelism must be at least 1");
            return LifelineCli.USAGE;
        }
        if (!Files.isRegularFile(file)) {
            err().println("lifeline: no heartbeat.md at " + file.toAbsolutePath().normalize()
                    + (Files.isDirectory(file) ? " (that is a directory)" : "")
                    + "; give the agent's file: lifeline wake PATH [--agent ID]");
            return LifelineCli.USAGE;
        }
        WakeOptions options = WakeOptions.defaults().withStartup(startup)
                .withLockTimeout(Duration.ofSeconds(lockTimeoutSeconds)).withBudget(budgetTime)
                .withBackgroundParallelism(bgParallelism);
        if (agentId != null) {
            options = options.withHeartbeat(this::beat);
        }
        WakeResult r;
        try {
            r = Wake.run(file, Clock.systemUTC(), options);
        } catch (HeartbeatParseException | LockTimeoutException e) {
            err().println("lifeline: " + e.getMessage());
            err().flush();
            return LifelineCli.REFUSED;
        }
        StringBuilder human = new StringBuilder();
        if (r.recovery() != null) {
            human.append("recovered: ").append(r.recovery()).append('\n');
        }
        for (WakeResult.Attempt a : r.ran()) {
            human.append(a.success() ? "ok     " : "FAILED ").append(a.actionId()).append(" (").append(a.attempt())
                    .append('/').append(a.maxAttempts()).append("): ").append(a.message()).append('\n');
        }
        for (WakeResult.HeldBack h : r.heldBack()) {
            human.append("held   ").append(h.actionId()).append(" (").append(h.verdict().name().toLowerCase())
                    .append("): ").append(h.reason()).append('\n');
        }
        for (WakeResult.NotRun n : r.notRun()) {
            human.append("later  ").append(n.actionId()).append(": ").append(n.reason()).append('\n');
        }
        human.append(r.ran().isEmpty() ? "nothing ran; " : "").append("next wake: ")
                .append(r.nextWake() == null ? "none" : r.nextWake().toString());
        print(r, human.toString());
        if (r.heartbeatError() != null) {
            err().println("lifeline: heartbeat not sent: " + r.heartbeatError());
            err().flush();
        }
        return r.failed().isEmpty() && r.heartbeatError() == null ? 0 : LifelineCli.REFUSED;
    }

    /** The heartbeat after the wake; a dead or offline agent joins first (self-healing, the status model). */
    private void beat(long nextWithinSeconds) {
        try {
            heartbeat(agentId, new Heartbeat(null, null, null, null, null, nextWithinSeconds), true);
        } catch (LifelineApiException e) {
            if (e.status() == 404) {
                throw new LifelineApiException(e.status(), e.code(), "agent '" + agentId
                        + "' is not registered in team '" + client().team() + "' (lifeline register " + agentId
                        + " first)", e.agentStatus(), false);
            }
            throw e;
        }
    }
}
