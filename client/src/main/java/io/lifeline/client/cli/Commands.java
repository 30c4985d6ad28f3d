package io.lifeline.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.client.LocalBeat;
import io.lifeline.client.model.AgentList;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.ApiKey;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.NewTeam;
import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** The CLI's commands (the daemon is {@link DaemonCommand}; agents, watch and events {@link ReadCommands}). */
final class Commands {
    private Commands() {
    }

    @Command(name = "create-team", mixinStandardHelpOptions = true,
            description = {"Create a team (operator key) and print its first admin key, once.",
                    "The operator key comes from --operator-key, env LIFELINE_OPERATOR_KEY, the config file's "
                            + "operator_key, or (for a Lifeline Local on this machine) .lifeline/operator.key."})
    static final class CreateTeam extends BaseCommand {
        @Parameters(paramLabel = "TEAM", description = "Team id: [A-Za-z0-9._-]{1,64}")
        String team;

        @Option(names = "--operator-key", description = "The operator key (see above)")
        String operatorKey;

        @CommandLine.Mixin
        TeamCommands.SettingOptions settings;

        @Override
        int run() {
            String key = global.operatorKey(operatorKey, env(), workDir());
            if (key == null) {
                err().println("lifeline: create-team needs an operator key: --operator-key, LIFELINE_OPERATOR_KEY, "
                        + "operator_key in the config file, or .lifeline/operator.key of a Lifeline Local started here");
                return LifelineCli.USAGE;
            }
            NewTeam t = global.client(env(), sleeper(), team, key, this::retrying).createTeam(team, settings.given());
            return print(t, "Team " + t.team() + " created. Admin key (shown once, store it now):\n"
                    + t.adminKey().key());
        }
    }

    @Command(name = "mint-admin-key", mixinStandardHelpOptions = true,
            description = {"Mint a new admin key for an existing team (operator key) and print it, once.",
                    "For a team that has lost its admin keys. The operator key is found as for create-team."})
    static final class MintAdminKey extends BaseCommand {
        @Parameters(paramLabel = "TEAM", description = "The team's id")
        String team;

        @Option(names = "--label", description = "A label for the key")
        String label;

        @Option(names = "--operator-key", description = "The operator key (see create-team)")
        String operatorKey;

        @Override
        int run() {
            String key = global.operatorKey(operatorKey, env(), workDir());
            if (key == null) {
                err().println("lifeline: mint-admin-key needs an operator key: --operator-key, LIFELINE_OPERATOR_KEY, "
                        + "operator_key in the config file, or .lifeline/operator.key of a Lifeline Local started here");
                return LifelineCli.USAGE;
            }
            ApiKey k = global.client(env(), sleeper(), team, key, this::retrying).mintAdminKey(team, label);
            return print(k, "Admin key " + k.keyId() + " minted for team " + team + " (shown once, store it now):\n"
                    + k.key());
        }
    }

    @Command(name = "register", mixinStandardHelpOptions = true, description = "Register an agent (admin key).")
    static final class Register extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--name", description = "Display name (default: the id)")
        String name;

        @Option(names = "--role", defaultValue = "worker", description = "Role (default: ${DEFAULT-VALUE})")
        String role;

        @Option(names = "--host", description = "Host that runs it (needed for revive)")
        String host;

        @Option(names = "--stale-after", description = "Seconds of silence before it counts as stale")
        Long staleAfter;

        @Option(names = "--grace-misses", description = "Missed sweeps before it is marked dead")
        Integer graceMisses;

        @Option(names = "--schedule", description = "every:30s, cron:..., daily:02:00, hourly, at:...")
        String schedule;

        @Option(names = "--time-zone", description = "IANA zone of the schedule (default UTC)")
        String timeZone;

        @Override
        int run() {
            AgentView a = client().register(new RegisterAgent(agentId, name == null ? agentId : name, role, host,
                    staleAfter, graceMisses, schedule, timeZone));
            return print(a, "registered " + a.agentId() + " (" + a.status() + ")");
        }
    }

    @Command(name = "join", mixinStandardHelpOptions = true, description = "Join: the agent becomes ready.")
    static final class Join extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Override
        int run() {
            AgentView a = client().join(agentId);
            return print(a, a.agentId() + " " + a.status() + "; heartbeat every " + a.heartbeatIntervalSeconds()
                    + "s");
        }
    }

    @Command(name = "beat", mixinStandardHelpOptions = true,
            description = "Send one heartbeat; if the server asks the agent to rejoin, join and send it again.")
    static final class Beat extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--status", description = "ready, working, idle or active")
        String status;

        @Option(names = "--next-within", description = "Seconds within which the next beat will come")
        Long nextWithin;

        @Option(names = "--no-rejoin", description = "Do not join when the server asks; fail instead")
        boolean noRejoin;

        @Option(names = "--direct", description = "Send to Lifeline even when LIFELINE_DAEMON names a host daemon")
        boolean direct;

        @Option(names = "--progress", description = "The work progressed now (a working agent with no progress past "
                + "its stallAfterSeconds is stalled)")
        boolean progress;

        @Option(names = "--stall-reason", description = "With --progress: what a silence after it would mean, such as "
                + "'model stream silent'")
        String stallReason;

        @Override
        int run() {
            if (stallReason != null && !progress) {
                throw new ParameterException(spec.commandLine(), "--stall-reason goes with --progress");
            }
            // Under a host daemon (LIFELINE_DAEMON), a plain beat is a local one: the daemon's batch carries it.
            var daemon = direct || status != null || nextWithin != null || progress ? Optional.<LocalBeat>empty()
                    : LocalBeat.fromEnvironment(env());
            if (daemon.isPresent()) {
                daemon.get().beat(agentId);
                out().println(agentId + ": local beat sent to the host daemon at " + daemon.get().url());
                return 0;
            }
            Heartbeat hb = new Heartbeat(status, null, null, null, null, nextWithin);
            if (progress) {
                hb = hb.withProgressAgeMs(0L).withStallReason(stallReason);
            }
            Beat beat = heartbeat(agentId, hb, !noRejoin);
            HeartbeatResult r = beat.result();
            return print(r, agentId + " " + r.agentStatus() + (beat.rejoined() ? " (rejoined)" : "")
                    + "; next deadline " + r.nextDeadline());
        }
    }

    @Command(name = "leave", mixinStandardHelpOptions = true, description = "Leave: the agent goes offline.")
    static final class Leave extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Option(names = "--reason")
        String reason;

        @Override
        int run() {
            AgentView a = client().leave(agentId, reason);
            return print(a, a.agentId() + " " + a.status()
                    + (a.tasksHandedBack() == null || a.tasksHandedBack().isEmpty() ? ""
                            : "; tasks handed back: " + String.join(", ", a.tasksHandedBack())));
        }
    }

    @Command(name = "delete-agent", mixinStandardHelpOptions = true,
            description = "Delete an agent that left or that no revive can bring back (admin key): no sweep or list "
                    + "reads it again; its history stays, and its id can be registered again.")
    static final class DeleteAgent extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Override
        int run() {
            JsonNode r = client().deleteAgent(agentId);
            return print(r, agentId + " deleted (it was " + r.path("status").asText() + ")");
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "One agent in detail; without an id, the team: its agents by status, and who needs you.")
    static final class Status extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID", arity = "0..1")
        String agentId;

        @Override
        int run() {
            if (agentId == null) {
                AgentList list = client().agents(null);
                // The team's hold (its own or a fleet-wide one), as the dashboard's banner shows it: one more read.
                String hold = TeamCommands.holdsOf(client().settings(), Instant.now());
                return print(list, overview(list, Instant.now()) + (hold.isEmpty() ? "" : "\n" + hold));
            }
            AgentView a = client().agent(agentId);
            Instant now = Instant.now();
            StringBuilder s = new StringBuilder();
            s.append(a.agentId()).append(" (").append(a.name()).append(", ").append(a.role()).append(")\n");
            s.append("  status:          ").append(a.status()).append('\n');
            if (a.waiting() != null) {
                s.append("  waiting:         ").append("person".equals(a.waiting().kind()) ? "for a person"
                        : "for its next prompt").append(" since ").append(relative(a.waiting().since(), now))
                        .append('\n');
            }
            if (a.stalled() != null) {
                s.append("  stalled:         since ").append(relative(a.stalled().since(), now)).append(" (")
                        .append(a.stalled().reason()).append(")\n");
            }
            if (a.parked() != null) {
                s.append("  parked:          until ").append(a.parked().until()).append(" (").append(a.parked()
                        .reason()).append("), since ").append(relative(a.parked().since(), now)).append('\n');
            }
            if (a.subagents() != null && !a.subagents().isEmpty()) {
                s.append("  subagents:       ").append(a.subagents().size() + (a.subagentsMore() == null ? 0
                        : a.subagentsMore())).append(" running\n");
                a.subagents().forEach(sub -> s.append("    ").append(sub.id()).append(" (").append(dash(sub.type()))
                        .append(") since ").append(relative(sub.since(), now)).append('\n'));
            }
            if (a.lastProgressAt() != null) {
                s.append("  last progress:   ").append(relative(a.lastProgressAt(), now)).append('\n');
            }
            if (a.flapping() != null) {
                s.append("  flapping:        since ").append(relative(a.flapping().since(), now))
                        .append(" (its deaths and recoveries are one notice until it is stable)\n");
            }
            s.append("  last heartbeat:  ").append(relative(a.heartbeatTs(), now)).append('\n');
            s.append("  deadline:        ").append(deadline(a, now)).append('\n');
            s.append("  misses:          ").append(a.consecutiveMisses()).append(" of ").append(a.graceMisses())
                    .append('\n');
            s.append("  host:            ").append(dash(a.hostId())).append('\n');
            s.append("  task:            ").append(dash(a.currentTaskId()));
            // Restarts in the last hour: its host daemon's own (as its batch and its crash reports told them) next to
            // the revive flow's (its changes to restarting, from the newest page of its history: one more read). The
            // flow never restarts what the daemon restarts: a crash report claims the restart, and the flow waits.
            Long byDaemon = a.stats() == null ? null : a.stats().restartsLastHour();
            Instant hourAgo = now.minus(Duration.ofHours(1));
            long byRevive = client().transitions(agentId, 100).transitions().stream()
                    .filter(t -> "restarting".equals(t.to()) && t.at() != null && t.at().isAfter(hourAgo)).count();
            if (byDaemon != null || byRevive > 0) {
                s.append("\n  restarts (1 h):  ").append(byDaemon == null ? 0 : byDaemon)
                        .append(" by its host daemon (as it reported), ").append(byRevive).append(" by the revive flow");
            }
            if (a.pausedUntil() != null) {
                s.append("\n  paused until:    ").append(a.pausedUntil()).append(a.pauseReason() == null ? ""
                        : " (" + a.pauseReason() + ")");
            }
            if (a.lastTransition() != null) {
                s.append("\n  last change:     ").append(a.lastTransition().from()).append(" -> ")
                        .append(a.lastTransition().to()).append(" (").append(a.lastTransition().trigger())
                        .append(") ").append(relative(a.lastTransition().at(), now));
                if (a.lastTransition().reason() != null) {
                    s.append("\n  reason:          ").append(a.lastTransition().reason());
                }
            }
            // The team's hold, as the dashboard's banner shows it: one more read.
            String hold = TeamCommands.holdsOf(client().settings(), now);
            if (!hold.isEmpty()) {
                s.append("\n").append(hold);
            }
            return print(a, s.toString());
        }
    }

    @Command(name = "revive", mixinStandardHelpOptions = true,
            description = "Start a revive of a dead agent that has a host (admin key).")
    static final class Revive extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID")
        String agentId;

        @Override
        int run() {
            var r = client().revive(agentId);
            return print(r, "revive of " + agentId + " started: " + r.executionName());
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true,
            description = "A maintenance window: the sweep leaves the agent (or the whole team) alone.")
    static final class Pause extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID", arity = "0..1", description = "The agent; none with --whole-team")
        String agentId;

        @Option(names = "--whole-team", description = "Pause the whole team")
        boolean wholeTeam;

        @Option(names = "--for", defaultValue = "3600", description = "Seconds (default ${DEFAULT-VALUE})")
        long seconds;

        @Option(names = "--reason")
        String reason;

        @Override
        int run() {
            var p = io.lifeline.client.model.Pause.lasting(Duration.ofSeconds(seconds), reason); // clash: the Pause command
            if (wholeTeam == (agentId != null)) {
                err().println("lifeline: give an AGENT_ID or --whole-team");
                return 2;
            }
            if (wholeTeam) {
                var t = client().pauseTeam(p);
                return print(t, "team " + t.team() + " paused until " + t.pausedUntil());
            }
            AgentView a = client().pause(agentId, p);
            return print(a, a.agentId() + " paused until " + a.pausedUntil());
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true, description = "End a maintenance window.")
    static final class Resume extends BaseCommand {
        @Parameters(paramLabel = "AGENT_ID", arity = "0..1")
        String agentId;

        @Option(names = "--whole-team")
        boolean wholeTeam;

        @Override
        int run() {
            if (wholeTeam == (agentId != null)) {
                err().println("lifeline: give an AGENT_ID or --whole-team");
                return 2;
            }
            if (wholeTeam) {
                return print(client().resumeTeam(), "team resumed");
            }
            return print(client().resume(agentId), agentId + " resumed");
        }
    }

    /**
     * The agent's deadline, only while it is alive (ready or working): an offline, dead or restarting agent is judged
     * by no deadline, and the one stored from its last life would read as a time it must beat by.
     */
    static String deadline(AgentView a, Instant now) {
        return Boolean.TRUE.equals(a.alive()) ? BaseCommand.relative(a.deadline(), now) : "-";
    }

    /** The order the team overview counts statuses in: the alive first, then the ones that need a person. */
    static final List<String> STATUSES = List.of("ready", "working", "restarting", "offline", "dead",
            "dead_failed_revive");

    /**
     * {@code lifeline status} without an id: how many agents are in each status, then each agent that needs a person
     * (dead, unrecoverable, restarting) with its last beat and host, and where to look next.
     */
    static String overview(AgentList list, Instant now) {
        Map<String, Long> counts = new LinkedHashMap<>();
        STATUSES.forEach(st -> counts.put(st, 0L));
        list.agents().forEach(a -> counts.merge(a.status(), 1L, Long::sum));
        StringBuilder s = new StringBuilder("team: " + list.agents().size() + " agent(s)");
        counts.forEach((st, n) -> s.append(n == 0 ? "" : ", " + n + " " + st));
        List<AgentView> trouble = list.agents().stream()
                .filter(a -> List.of("dead", "dead_failed_revive", "restarting").contains(a.status())).toList();
        for (AgentView a : trouble) {
            s.append("\n  ").append(a.agentId()).append(": ").append(a.status()).append(", last beat ")
                    .append(BaseCommand.relative(a.heartbeatTs(), now)).append(", host ").append(dash(a.hostId()));
        }
        s.append(list.agents().isEmpty() ? "\n(no agents)" : trouble.isEmpty() ? "\nnobody needs you"
                : "\nlifeline status AGENT_ID for one agent; lifeline agents for the table");
        return s.toString();
    }

    static String dash(Object o) {
        return o == null ? "-" : o.toString();
    }
}
