package io.lifeline.client.cli;

import io.lifeline.client.Sleeper;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code lifeline} CLI. Exit codes: 0 done, 1 the server refused (its code is printed), 2 bad usage,
 * 3 Lifeline could not be reached.
 */
@Command(name = "lifeline", mixinStandardHelpOptions = true, version = "lifeline 0.1.0",
        description = "Talk to Lifeline: register and heartbeat agents, watch a team, run a host daemon.",
        subcommands = {Commands.CreateTeam.class, Commands.MintAdminKey.class, Commands.Register.class,
                Commands.Join.class, Commands.Beat.class,
                Commands.Leave.class, Commands.DeleteAgent.class, Commands.Status.class, ReadCommands.Agents.class,
                ReadCommands.Watch.class, ReadCommands.Events.class, Commands.Revive.class, Commands.Pause.class, Commands.Resume.class,
                TeamCommands.Tasks.class, TeamCommands.Keys.class, TeamCommands.Settings.class,
                TeamCommands.Inbox.class, TeamCommands.Revivals.class, DaemonCommand.class, WakeCommand.class,
                McpCommand.class, BridgeCommand.class, HooksCommand.class, DoctorCommand.class},
        footer = {"", "Connection: --url (env LIFELINE_URL, default http://127.0.0.1:8787), --team (LIFELINE_TEAM, "
                + "default local), --key (LIFELINE_API_KEY, or the older LIFELINE_KEY); a flag wins over the "
                + "environment, which wins over the config file (--config PATH, default "
                + "$XDG_CONFIG_HOME/lifeline/config or ~/.config/lifeline/config: url, team, api_key, operator_key).",
                "Exit codes: 0 done, 1 refused by the server, 2 bad usage or a bad config file, 3 cannot reach "
                + "Lifeline."})
public final class LifelineCli implements Runnable {
    public static final int REFUSED = 1;
    public static final int USAGE = 2;
    public static final int UNREACHABLE = 3;

    final Map<String, String> env;
    final Sleeper sleeper;
    /** Where {@code .lifeline/operator.key} of a Lifeline Local started here is looked for. */
    final Path workDir;

    public LifelineCli() {
        this(environment(), Sleeper.REAL);
    }

    /** The process's environment: read here, the CLI's entry, and handed to every command (tests pass their own). */
    static Map<String, String> environment() {
        return System.getenv();
    }

    /** {@code env} stands in for the environment and {@code sleeper} waits between retries (tests). */
    public LifelineCli(Map<String, String> env, Sleeper sleeper) {
        this(env, sleeper, Path.of(""));
    }

    public LifelineCli(Map<String, String> env, Sleeper sleeper, Path workDir) {
        this.env = Map.copyOf(env);
        this.sleeper = sleeper;
        this.workDir = workDir;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(new CommandLine(this), "Give a command");
    }
}
