package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.model.AgentChanges;
import io.lifeline.client.model.AgentList;
import io.lifeline.client.model.AgentView;
import io.lifeline.client.model.EventList;
import io.lifeline.client.model.EventQuery;
import io.lifeline.client.model.EventView;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The CLI's commands that read the team's agents and events: {@code agents}, {@code watch} and {@code events}. */
final class ReadCommands {
    private ReadCommands() {
    }

    @Command(name = "agents", mixinStandardHelpOptions = true,
            description = "The team's agents, as a table, a page at a time (--all: every page).")
    static final class Agents extends BaseCommand {
        @Option(names = "--status", description = "Only agents with this status (newest in it first)")
        String status;

        @Option(names = "--limit", description = "Agents a page (1 to 1000; default: the server's, 100)")
        Integer limit;

        @Option(names = "--cursor", description = "The page after the one that printed this cursor")
        String cursor;

        @Option(names = "--all", description = "Every page, one after another, as one table")
        boolean all;

        @Override
        int run() {
            if (all && cursor != null) {
                throw new ParameterException(spec.commandLine(), "--all reads from the first page: "
                        + "give it no --cursor");
            }
            if (limit != null && (limit < 1 || limit > LifelineClient.LARGEST_PAGE)) {
                throw new ParameterException(spec.commandLine(), "--limit must be from 1 to "
                        + LifelineClient.LARGEST_PAGE);
            }
            if (all) {
                List<AgentView> every = new ArrayList<>();
                client().agentPages(status, limit).forEach(page -> every.addAll(page.agents()));
                AgentList list = new AgentList(every.size(), every, null);
                return print(list, table(list, Instant.now()));
            }
            AgentList page = client().agentsPage(status, limit, cursor);
            String more = page.nextCursor() == null ? "" : "\nmore: lifeline agents"
                    + (status == null ? "" : " --status " + status) + (limit == null ? "" : " --limit " + limit)
                    + " --cursor " + page.nextCursor();
            return print(page, table(page, Instant.now()) + more);
        }
    }

    @Command(name = "watch", mixinStandardHelpOptions = true,
            description = "A live view of the team's first page of agents: status changes each refresh, "
                    + "the page every 5.")
    static final class Watch extends BaseCommand {
        /** Every this many refreshes the page is read again (heartbeat ages, misses, pauses); changes in between. */
        static final int PAGE_EVERY = 5;

        @Option(names = "--interval", defaultValue = "2s", description = "Refresh every (e.g. 500ms, 2s; "
                + "default ${DEFAULT-VALUE})")
        String interval;

        @Option(names = "--iterations", description = "Stop after this many refreshes (default: until Ctrl-C)")
        Integer iterations;

        @Option(names = "--once", description = "One refresh, then stop")
        boolean once;

        @Option(names = "--no-clear", description = "Do not clear the screen between refreshes")
        boolean noClear;

        @Override
        int run() {
            int n = once ? 1 : iterations == null ? Integer.MAX_VALUE : iterations;
            Duration every = duration(interval);
            Roster roster = new Roster();
            for (int i = 0; i < n; i++) {
                AgentList list = roster.refresh(i % PAGE_EVERY == 0);
                Instant now = Instant.now();
                PrintWriter out = out();
                if (!noClear && !global.json) {
                    out.print("\033[H\033[2J");
                }
                if (global.json) {
                    print(list, "");
                } else {
                    out.println("lifeline watch  team " + client().team() + "  " + now + "  (every "
                            + every.toMillis() + " ms)");
                    out.println(table(list, now));
                    out.flush();
                }
                if (i + 1 < n) {
                    try {
                        Thread.sleep(every.toMillis());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return 0;
                    }
                }
            }
            return 0;
        }

        /**
         * What {@code watch} shows, never the whole team: the team's first page (100 agents by id), read again every
         * {@link #PAGE_EVERY} refreshes, and in between only the agents whose status changed since the refresh before
         * ({@code changedSince}), merged in. More changes than one answer holds: the page is read again.
         */
        private final class Roster {
            private final Map<String, AgentView> shown = new TreeMap<>();
            private Instant since;

            AgentList refresh(boolean page) {
                if (page || since == null) {
                    since = client().agentsChangedSince(Instant.EPOCH, 1).nextChangedSince();
                    shown.clear();
                    client().agentsPage(null, null, null).agents().forEach(a -> shown.put(a.agentId(), a));
                } else {
                    AgentChanges c = client().agentsChangedSince(since, LifelineClient.LARGEST_PAGE);
                    if (c.truncated()) {
                        return refresh(true);
                    }
                    c.agents().forEach(a -> shown.put(a.agentId(), a));
                    since = c.nextChangedSince();
                }
                List<AgentView> agents = new ArrayList<>(shown.values());
                return new AgentList(agents.size(), agents, null);
            }
        }
    }

    @Command(name = "events", mixinStandardHelpOptions = true, description = {"The team's recent events, newest "
            + "first.", "--since and --until take an ISO-8601 time (2026-03-01T12:00:00Z) or a duration ago: 30s, "
            + "15m, 2h, 1d (so --since 2h is the last two hours). Both bounds are inclusive."})
    static final class Events extends BaseCommand {
        /** Lifeline keys events by epoch milliseconds of 13 digits: the server refuses times outside these. */
        static final Instant EARLIEST = Instant.EPOCH;
        static final Instant END = Instant.ofEpochMilli(10_000_000_000_000L); // 2286-11-20T17:46:40Z, excluded
        private static final Pattern AGO = Pattern.compile("([0-9]{1,9})([smhd])");
        private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");

        @Option(names = "--since", paramLabel = "TIME", converter = TimeConverter.class,
                description = "Only events at or after TIME: ISO-8601, or 15m, 2h, 1d ago")
        Instant since;

        @Option(names = "--until", paramLabel = "TIME", converter = TimeConverter.class,
                description = "Only events at or before TIME: ISO-8601, or 15m, 2h, 1d ago")
        Instant until;

        @Option(names = "--agent", paramLabel = "AGENT_ID", description = "Only events about this agent")
        String agentId;

        @Option(names = "--type", paramLabel = "TYPE", description = "Only events of this type, e.g. "
                + "AgentStatusChanged, AgentRestartRequested, TasksReassigned")
        String type;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "20", description = "At most this many, 1..100 "
                + "(default ${DEFAULT-VALUE})")
        int limit;

        /** An ISO-8601 time, or a count of s/m/h/d meaning that long before now. */
        static final class TimeConverter implements CommandLine.ITypeConverter<Instant> {
            @Override
            public Instant convert(String text) {
                Instant at;
                Matcher ago = AGO.matcher(text.strip());
                if (ago.matches()) {
                    long n = Long.parseLong(ago.group(1));
                    Duration d = switch (ago.group(2)) {
                        case "s" -> Duration.ofSeconds(n);
                        case "m" -> Duration.ofMinutes(n);
                        case "h" -> Duration.ofHours(n);
                        default -> Duration.ofDays(n);
                    };
                    at = Instant.now().minus(d);
                } else {
                    try {
                        at = Instant.parse(text.strip());
                    } catch (DateTimeParseException e) {
                        throw new CommandLine.TypeConversionException("'" + text + "' is neither an ISO-8601 time "
                                + "such as 2026-03-01T12:00:00Z nor a duration ago such as 15m, 2h or 1d");
                    }
                }
                if (at.isBefore(EARLIEST) || !at.isBefore(END)) {
                    throw new CommandLine.TypeConversionException("'" + text + "' is " + at + ", outside the times "
                            + "Lifeline takes (from " + EARLIEST + " up to, not including, " + END + ")");
                }
                return at;
            }
        }

        @Override
        int run() {
            // Refused here, before anything is sent, rather than by the server.
            if (since != null && until != null && since.isAfter(until)) {
                throw new ParameterException(spec.commandLine(), "--since (" + since
                        + ") must not be after --until (" + until + ")");
            }
            if (limit < 1 || limit > 100) {
                throw new ParameterException(spec.commandLine(), "--limit must be 1..100, not " + limit);
            }
            if (agentId != null && !ID.matcher(agentId).matches()) {
                throw new ParameterException(spec.commandLine(), "--agent must be an agent id "
                        + "([A-Za-z0-9._-]{1,64}), not '" + agentId + "'");
            }
            EventList list = client().events(EventQuery.all().withSince(since).withUntil(until).withAgent(agentId)
                    .withType(type).withLimit(limit));
            StringBuilder s = new StringBuilder();
            for (EventView e : list.events()) {
                s.append(e.at()).append("  ").append(e.type()).append("  ").append(summary(e)).append('\n');
            }
            return print(list, list.events().isEmpty() ? "no events" : s.toString().stripTrailing());
        }

        private static String summary(EventView e) {
            var d = e.detail();
            if (d != null && d.has("from") && d.has("to")) {
                return d.path("agentId").asText() + " " + d.get("from").asText() + " -> " + d.get("to").asText()
                        + " (" + d.path("trigger").asText() + ")";
            }
            return d == null ? "" : d.toString();
        }
    }

    /** ID, STATUS, LAST BEAT (age), DEADLINE, MISSES, TASK, HOST. */
    static String table(AgentList list, Instant now) {
        String fmt = "%-20s %-18s %-10s %-10s %-6s %-12s %-12s";
        StringBuilder s = new StringBuilder(String.format(fmt, "ID", "STATUS", "LAST BEAT", "DEADLINE", "MISSES",
                "TASK", "HOST"));
        for (AgentView a : list.agents()) {
            s.append('\n').append(String.format(fmt, a.agentId(), a.statusWithWait(),
                    BaseCommand.relative(a.heartbeatTs(), now),
                    Commands.deadline(a, now), Commands.dash(a.consecutiveMisses()),
                    Commands.dash(a.currentTaskId()), Commands.dash(a.hostId())));
        }
        if (list.agents().isEmpty()) {
            s.append("\n(no agents)");
        }
        return s.toString();
    }
}
