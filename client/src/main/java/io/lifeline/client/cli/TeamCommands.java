package io.lifeline.client.cli;

import io.lifeline.client.model.ApiKey;
import io.lifeline.client.model.KeyList;
import io.lifeline.client.model.NewTask;
import io.lifeline.client.model.Notice;
import io.lifeline.client.model.Revival;
import io.lifeline.client.model.TaskChange;
import io.lifeline.client.model.TaskList;
import io.lifeline.client.model.TaskView;
import io.lifeline.client.model.TeamSettings;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** The team's tasks, keys and settings, and an agent's inbox and revivals. */
final class TeamCommands {
    private TeamCommands() {
    }

    /** A command that only groups others: alone, it is bad usage (exit 2) and says which to give. */
    abstract static class Group implements Runnable {
        @Spec
        CommandSpec spec;

        @Override
        public void run() {
            throw new CommandLine.ParameterException(spec.commandLine(), "Give a subcommand: "
                    + String.join(", ", spec.subcommands().keySet()));
        }
    }

    // ---- tasks ----

    @Command(name = "tasks", mixinStandardHelpOptions = true, description = "The team's tasks.",
            subcommands = {TaskCreate.class, TaskList_.class, TaskClaim.class, TaskComplete.class})
    static final class Tasks extends Group {
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a pending task (agent key).")
    static final class TaskCreate extends BaseCommand {
        @Parameters(paramLabel = "TASK_ID")
        String taskId;

        @Option(names = "--title", required = true)
        String title;

        @Option(names = "--description")
        String description;

        @Override
        int run() {
            TaskView t = client().createTask(new NewTask(taskId, title, description));
            return print(t, "created task " + t.taskId() + " (" + t.status() + ")");
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The team's tasks, as a table.")
    static final class TaskList_ extends BaseCommand {
        @Option(names = "--status", description = "pending, in_progress or done")
        String status;

        @Override
        int run() {
            TaskList list = client().tasks(status);
            String fmt = "%-20s %-12s %-20s %-10s %s";
            StringBuilder s = new StringBuilder(String.format(fmt, "ID", "STATUS", "ASSIGNEE", "CREATED", "TITLE"));
            Instant now = Instant.now();
            for (TaskView t : list.tasks()) {
                s.append('\n').append(String.format(fmt, t.taskId(), t.status(), Commands.dash(t.assignee()),
                        relative(t.createdAt(), now), t.title()));
            }
            if (list.tasks().isEmpty()) {
                s.append("\n(no tasks)");
            }
            return print(list, s.toString());
        }
    }

    @Command(name = "claim", mixinStandardHelpOptions = true,
            description = "An agent claims a pending task: the task in_progress, the agent working (agent key).")
    static final class TaskClaim extends BaseCommand {
        @Parameters(paramLabel = "TASK_ID")
        String taskId;

        @Option(names = "--agent", required = true, paramLabel = "AGENT_ID")
        String agentId;

        @Override
        int run() {
            TaskChange c = client().claimTask(taskId, agentId);
            return print(c, "task " + c.task().taskId() + " " + c.task().status() + " by " + agentId + "; " + agentId
                    + " " + c.agentStatus());
        }
    }

    @Command(name = "complete", mixinStandardHelpOptions = true,
            description = "The agent completes its task: the task done, the agent ready (agent key).")
    static final class TaskComplete extends BaseCommand {
        @Parameters(paramLabel = "TASK_ID")
        String taskId;

        @Option(names = "--agent", required = true, paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--result")
        String result;

        @Override
        int run() {
            TaskChange c = client().completeTask(taskId, agentId, result);
            return print(c, "task " + c.task().taskId() + " " + c.task().status() + "; " + agentId + " "
                    + c.agentStatus());
        }
    }

    // ---- keys ----

    @Command(name = "keys", mixinStandardHelpOptions = true, description = "The team's API keys (admin key).",
            subcommands = {KeyCreate.class, KeyList_.class, KeyRevoke.class})
    static final class Keys extends Group {
    }

    @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a key; its secret is shown once.")
    static final class KeyCreate extends BaseCommand {
        @Option(names = "--scope", required = true, description = "read, agent or admin")
        String scope;

        @Option(names = "--label")
        String label;

        @Override
        int run() {
            ApiKey k = client().createKey(scope, label);
            return print(k, "key " + k.keyId() + " (" + k.scope() + ") created; the secret, shown once:\n" + k.key());
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "The team's keys (never their secrets).")
    static final class KeyList_ extends BaseCommand {
        @Override
        int run() {
            KeyList list = client().keys();
            String fmt = "%-14s %-8s %-12s %s";
            StringBuilder s = new StringBuilder(String.format(fmt, "KEY ID", "SCOPE", "CREATED", "LABEL"));
            Instant now = Instant.now();
            for (ApiKey k : list.keys()) {
                s.append('\n').append(String.format(fmt, k.keyId(), k.scope(), relative(k.createdAt(), now),
                        Commands.dash(k.label())));
            }
            return print(list, s.toString());
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true, description = "Revoke a key by its id.")
    static final class KeyRevoke extends BaseCommand {
        @Parameters(paramLabel = "KEY_ID")
        String keyId;

        @Override
        int run() {
            client().revokeKey(keyId);
            return print(Map.of("success", true, "revoked", keyId), "revoked " + keyId);
        }
    }

    // ---- settings ----

    @Command(name = "settings", mixinStandardHelpOptions = true, description = "The team's settings.",
            subcommands = {SettingsShow.class, SettingsSet.class, ReleaseHold.class})
    static final class Settings extends Group {
    }

    static String settings(TeamSettings t) {
        return "team:                         " + t.team()
                + "\nleader:                       " + Commands.dash(t.leaderAgentId())
                + "\nself-preservation threshold:  " + Commands.dash(t.selfPreservationThreshold())
                + "\nself-preservation min alive:  " + Commands.dash(t.selfPreservationMinAlive())
                + "\nfailure domains:              " + Commands.dash(t.failureDomains())
                + "\npaused until:                 " + Commands.dash(t.pausedUntil())
                + (t.pauseReason() == null ? "" : " (" + t.pauseReason() + ")")
                + (holdsOf(t, Instant.now()).isEmpty() ? "" : "\n" + holdsOf(t, Instant.now()));
    }

    /**
     * The team's holds as the dashboard's banner says them: a fleet-wide hold first (while it stands the team's own
     * flag is left as it was), then the team's own; empty when neither holds nor was released.
     */
    static String holdsOf(TeamSettings t, Instant now) {
        TeamSettings.Hold f = t.fleetHold();
        TeamSettings.Hold h = t.hold();
        if (f != null && (f.held() || h == null || !h.held())) {
            String fleet = fleetLines(f, now);
            return fleet.isEmpty() ? holdLines(h, now) : fleet;
        }
        return holdLines(h, now);
    }

    /**
     * The team's share of a fleet-wide hold: that Lifeline may be unable to hear agents across the fleet, this team's
     * own counts, since when, and what to do; once the team is released from it, that.
     */
    static String fleetLines(TeamSettings.Hold f, Instant now) {
        if (f == null) {
            return "";
        }
        if (f.held()) {
            return "fleet-wide self-preservation hold: Lifeline may be unable to hear agents across the fleet; "
                    + (f.staleAgents() == 0 ? "none of this team's " + f.aliveAgents() + " agents is silent now"
                    : f.staleAgents() + " of this team's " + f.aliveAgents() + " agents are held")
                    + ", since " + f.since() + " (" + BaseCommand.relative(f.since(), now) + ")\n  why: " + f.why()
                    + "\n  release this team from it (its silent agents are then marked dead as judged): "
                    + "lifeline settings release-hold";
        }
        if (f.releasedAt() != null) {
            return "released from the fleet-wide hold at " + f.releasedAt() + ": this team's " + f.staleAgents()
                    + " silent agents are marked dead as judged, while the hold (since " + f.since()
                    + ") stands for the rest of the fleet";
        }
        return "";
    }

    /**
     * The team's hold as the dashboard's banner says it: how many agents, since when, why, and what to do; empty for
     * a flag one failure domain explained (its agents die: no hold).
     */
    static String holdLines(TeamSettings.Hold h, Instant now) {
        if (h == null) {
            return "";
        }
        if (h.held()) {
            return "self-preservation hold: " + h.staleAgents() + " of " + h.aliveAgents() + " agents silent since "
                    + h.since() + " (" + BaseCommand.relative(h.since(), now) + ")\n  why: " + h.why()
                    + "\n  none of them is marked dead while it holds; release it: lifeline settings release-hold";
        }
        if (h.releasedAt() != null) {
            return "self-preservation hold released at " + h.releasedAt() + ": the " + h.staleAgents()
                    + " agents silent since " + h.since() + " are marked dead as judged";
        }
        return "";
    }

    @Command(name = "release-hold", mixinStandardHelpOptions = true,
            description = "Release the team's self-preservation hold, its own or its share of a fleet-wide one (admin"
                    + " key): its silent agents are marked dead as judged.")
    static final class ReleaseHold extends BaseCommand {
        @Override
        int run() {
            TeamSettings t = client().releaseHold();
            return print(t, settings(t));
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show the team's settings.")
    static final class SettingsShow extends BaseCommand {
        @Override
        int run() {
            TeamSettings t = client().settings();
            return print(t, settings(t));
        }
    }

    /** The team settings that create-team and settings set both take. */
    static final class SettingOptions {
        @Option(names = "--leader", paramLabel = "AGENT_ID",
                description = "The team leader's agent id (hears of deaths in its inbox)")
        String leader;

        @Option(names = "--self-preservation-threshold", description = "Share (0..1] of stale agents that holds "
                + "dead-marking back")
        Double threshold;

        @Option(names = "--self-preservation-min-alive", description = "Alive agents needed for self-preservation")
        Integer minAlive;

        @Option(names = "--failure-domains", paramLabel = "host|source|none", description = "What one failure "
                + "domain is: a silence confined to one while the rest still reaches Lifeline is marked dead "
                + "(default source)")
        String failureDomains;

        /** The settings given, by their API names, in a map the caller may add to. */
        Map<String, Object> given() {
            Map<String, Object> settings = new LinkedHashMap<>();
            if (leader != null) {
                settings.put("leaderAgentId", leader);
            }
            if (threshold != null) {
                settings.put("selfPreservationThreshold", threshold);
            }
            if (minAlive != null) {
                settings.put("selfPreservationMinAlive", minAlive);
            }
            if (failureDomains != null) {
                settings.put("failureDomains", failureDomains);
            }
            return settings;
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Change settings (admin key).")
    static final class SettingsSet extends BaseCommand {
        @Mixin
        SettingOptions options;

        @Option(names = "--no-leader", description = "Remove the leader")
        boolean noLeader;

        @Override
        int run() {
            if (noLeader && options.leader != null) {
                err().println("lifeline: give --leader or --no-leader, not both");
                return LifelineCli.USAGE;
            }
            Map<String, Object> changes = options.given();
            if (noLeader) {
                changes.put("leaderAgentId", null);
            }
            if (changes.isEmpty()) {
                err().println("lifeline: give at least one setting to change (see --help)");
                return LifelineCli.USAGE;
            }
            TeamSettings t = client().updateSettings(changes);
            return print(t, settings(t));
        }
    }

    // ---- an agent's inbox and revivals ----

    @Command(name = "inbox", mixinStandardHelpOptions = true, description = "An agent's notices, newest first.")
    static final class Inbox extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--limit")
        Integer limit;

        @Override
        int run() {
            io.lifeline.client.model.Inbox inbox = client().inbox(agentId, limit); // clash: the Inbox command
            StringBuilder s = new StringBuilder();
            for (Notice n : inbox.messages()) {
                s.append(n.at()).append("  ").append(n.message()).append('\n');
            }
            return print(inbox, inbox.messages().isEmpty() ? "no notices for " + agentId : s.toString().stripTrailing());
        }
    }

    @Command(name = "revivals", mixinStandardHelpOptions = true,
            description = "An agent's revive executions: steps, attempts and outcome, newest first.")
    static final class Revivals extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--limit")
        Integer limit;

        @Override
        int run() {
            io.lifeline.client.model.Revivals list = client().revivals(agentId, limit); // clash: the Revivals command
            StringBuilder s = new StringBuilder();
            for (Revival r : list.revivals()) {
                s.append(r.startedAt()).append("  ").append(Commands.dash(r.outcome())).append(" after ")
                        .append(r.attempts()).append(" attempt(s)\n");
                for (Revival.Step step : r.steps() == null ? List.<Revival.Step>of() : r.steps()) {
                    s.append("    ").append(step.at()).append("  ").append(step.step()).append(" #")
                            .append(step.attempt()).append(": ").append(step.outcome()).append('\n');
                }
            }
            return print(list, list.revivals().isEmpty() ? "no revivals of " + agentId : s.toString().stripTrailing());
        }
    }
}
