package io.lifeline.client.cli;

import io.lifeline.client.hooks.FileChange;
import io.lifeline.client.hooks.HookConfigException;
import io.lifeline.client.hooks.HookFiles;
import io.lifeline.client.hooks.HookTarget;
import io.lifeline.hooks.HookRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code lifeline hooks install|uninstall RUNTIME}: Lifeline's hooks in a coding-agent runtime's own settings. */
@Command(name = "hooks", mixinStandardHelpOptions = true,
        description = {"Watch Claude Code, Codex CLI, Gemini CLI or opencode by configuration alone: merge Lifeline's "
                + "hooks into the runtime's own settings (or take them out). Runtimes: claude-code, codex, gemini, "
                + "opencode."},
        subcommands = {HooksCommand.Install.class, HooksCommand.Uninstall.class})
final class HooksCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Give install or uninstall: lifeline hooks install --help");
    }

    /** Where the settings are: a project (default: the working directory) or the user's own. */
    static final class Where {
        @Option(names = "--project-dir", paramLabel = "DIR", description = "The project whose settings get the "
                + "hooks (default: the working directory)")
        Path projectDir;

        @Option(names = "--user", description = "The user's own settings instead (~/.claude/settings.json, "
                + "$CODEX_HOME or ~/.codex, ~/.gemini/settings.json, ~/.config/opencode/plugins)")
        boolean user;
    }

    abstract static class HooksBase extends BaseCommand {
        @Parameters(index = "0", paramLabel = "RUNTIME", description = "claude-code, codex, gemini or opencode")
        String runtimeName;

        @ArgGroup(exclusive = true)
        Where where;

        @Option(names = "--dry-run", description = "Print what would change; write nothing")
        boolean dryRun;

        HookRuntime runtime() {
            return HookRuntime.fromWire(runtimeName).orElseThrow(() -> new ParameterException(spec.commandLine(),
                    "unknown runtime '" + runtimeName + "' (known: claude-code, codex, gemini, opencode)"));
        }

        HookFiles.Scope scope() {
            if (where != null && where.user) {
                return HookFiles.Scope.user(env());
            }
            Path dir = where != null && where.projectDir != null ? workDir().resolve(where.projectDir) : workDir();
            return HookFiles.Scope.project(dir.toAbsolutePath().normalize(), env());
        }

        /** Prints each file's change and, unless --dry-run, writes it; 2 when a file cannot be edited safely. */
        int carryOut(Supplier<List<FileChange>> plan, List<String> afterwards) {
            List<FileChange> changes;
            try {
                changes = plan.get();
            } catch (HookConfigException e) {
                err().println("lifeline: " + e.getMessage());
                return LifelineCli.USAGE;
            }
            for (FileChange c : changes) {
                out().println(c.file() + ":");
                c.summary().forEach(line -> out().println("  " + line));
                if (!c.changed()) {
                    out().println("  (unchanged)");
                } else if (dryRun) {
                    out().println(c.after() == null ? "  would delete it (dry run: nothing written)"
                            : "  would write (dry run: nothing written):");
                    if (c.after() != null) {
                        c.after().lines().forEach(line -> out().println("    " + line));
                    }
                } else {
                    out().println(c.after() == null ? "  deleted" : c.before() == null ? "  created" : "  written");
                }
            }
            if (!dryRun) {
                try {
                    HookFiles.apply(changes);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot write the runtime's settings: " + e.getMessage(), e);
                }
            }
            afterwards.forEach(out()::println);
            out().flush();
            return 0;
        }
    }

    /** Direct (the default) or through the host daemon. */
    static final class Mode {
        @Option(names = "--via-daemon", description = "Post to the host daemon ($LIFELINE_DAEMON, which lifeline "
                + "daemon sets for the commands it runs): no cloud write per hook")
        boolean viaDaemon;

        @Option(names = "--direct", description = "Post to Lifeline itself (the default): the heartbeat URL when "
                + "one is configured, else --url")
        boolean direct;
    }

    @Command(name = "install", mixinStandardHelpOptions = true,
            description = {"Merge Lifeline's hooks into RUNTIME's settings: Claude Code .claude/settings.local.json "
                    + "(--user: ~/.claude/settings.json), Codex .codex/hooks.json and config.toml's notify, Gemini "
                    + "CLI .gemini/settings.json, opencode .opencode/plugins/lifeline.js. Idempotent; the "
                    + "settings' other keys and hooks are kept as they were.",
                    "The API key is never written: the hooks read LIFELINE_API_KEY from the runtime's environment "
                            + "when they run. Direct mode bakes Lifeline's URL (--heartbeat-url when set, else --url) "
                            + "and the team (--team) into the hooks.",
                    "Before writing, it checks that the hooks can report: the agent is registered (registered now "
                            + "when the key is an admin key) and, in direct mode, LIFELINE_API_KEY is set here and "
                            + "accepted. Exit 1, with nothing written, when they could not."})
    static final class Install extends HooksBase {
        @Option(names = "--agent", required = true, paramLabel = "AGENT_ID", description = "The agent these hooks "
                + "report as (register it first)")
        String agentId;

        @ArgGroup(exclusive = true)
        Mode mode;

        @Option(names = "--no-check", description = "Install without asking Lifeline whether the agent is registered "
                + "and the hooks' key is accepted, and without the key variable set here")
        boolean noCheck;

        @Override
        int run() {
            Map<String, String> env = env();
            HookRuntime runtime = runtime();
            boolean viaDaemon = mode != null && mode.viaDaemon;
            HookTarget target;
            try {
                if (viaDaemon) {
                    target = HookTarget.viaDaemon(runtime, agentId, global.team(env));
                } else {
                    String base = GlobalOptions.first(global.heartbeatUrl(env), global.url(env));
                    target = HookTarget.direct(runtime, agentId, global.team(env), URI.create(base));
                }
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
            HookFiles.Scope scope = scope();
            if (!dryRun && !noCheck && !checked(target)) {
                return LifelineCli.REFUSED;
            }
            List<String> notes = new ArrayList<>(notes(target, where != null && where.user));
            if (!viaDaemon && global.heartbeatUrl(env) == null && GlobalOptions.DEFAULT_URL.equals(global.url(env))) {
                notes.add("No --url, LIFELINE_URL or config file url was set: the hooks post to the default, a "
                        + "Lifeline Local on this machine (" + GlobalOptions.DEFAULT_URL + ").");
            }
            return carryOut(() -> HookFiles.install(target, scope), notes);
        }

        /**
         * The hooks can report: the agent is registered (registered now with an admin key), and in direct mode the
         * key variable they read is set and accepted. What was checked goes to stdout; what is missing, to stderr,
         * and then nothing is written.
         */
        private boolean checked(HookTarget target) {
            Map<String, String> env = env();
            String team = global.team(env);
            HookChecks checks = new HookChecks(env, team, key -> key == null ? client()
                    : global.client(env, sleeper(), team, key, null, true));
            checks.keyVariable(target);
            checks.agent(target);
            checks.notes.forEach(out()::println);
            out().flush();
            if (checks.problems.isEmpty()) {
                return true;
            }
            checks.problems.forEach(p -> err().println("lifeline: " + p));
            err().println("lifeline: nothing was written: the hooks of " + target.agentId() + " could not report "
                    + "(--no-check installs them anyway)");
            err().flush();
            return false;
        }

        private static List<String> notes(HookTarget t, boolean user) {
            List<String> notes = new ArrayList<>();
            if (t.viaDaemon()) {
                notes.add("The hooks post to $" + HookTarget.DAEMON_ENV + t.daemonPath() + " as agent " + t.agentId()
                        + ": run " + t.runtime().wire() + " under lifeline daemon, which sets it.");
            } else {
                notes.add("The hooks post to " + t.directUrl() + " with the key in $" + HookTarget.KEY_ENV
                        + (t.runtime() == HookRuntime.CLAUDE_CODE ? "" : " (else the older $" + HookTarget.OLD_KEY_ENV
                        + ")") + ", read from " + t.runtime().wire() + "'s environment when they run (it is in no "
                        + "file).");
                if (t.runtime() != HookRuntime.OPENCODE) {
                    notes.add("Each session's start leaves a watcher (a sh loop, gone with the session) that reports "
                            + "the runtime dead within about a second if its process ends without the session's end "
                            + "(kill -9, a crash).");
                }
            }
            if (t.runtime() == HookRuntime.CODEX) {
                notes.add("Codex runs hooks.json's hooks once you trust them (/hooks in codex; codex exec "
                        + "--dangerously-bypass-hook-trust skips the review)" + (user
                        ? "; notify runs either way." : ", and a project's .codex only in a trusted project "
                        + "(codex --trust). Codex runs notify from your own config.toml only: install --user for "
                        + "turn ends that need no trust."));
            }
            return notes;
        }
    }

    @Command(name = "uninstall", mixinStandardHelpOptions = true,
            description = "Take Lifeline's hooks out of RUNTIME's settings (only those: every other hook and key stays).")
    static final class Uninstall extends HooksBase {
        @Override
        int run() {
            HookRuntime runtime = runtime();
            HookFiles.Scope scope = scope();
            return carryOut(() -> HookFiles.uninstall(runtime, scope), List.of());
        }
    }
}
