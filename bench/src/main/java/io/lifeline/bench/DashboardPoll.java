package io.lifeline.bench;

/**
 * What one poll of the open dashboard reads, from its own schedule ({@code app.js}: every 2 s the agents whose status
 * changed since the last poll, the last 25 events and the settings; every fifth poll, in place of the changes, the
 * first page of the team and a page of each of the three troubled statuses, and the last-hour bar's events) and the
 * read units measured for each request on the project's engine (BENCHMARKS.md sections 9 and 10: a page of 100 agents
 * 51 units, an empty status page or change query 3 units, a page of events 4.5, the settings 1). Never the whole
 * team: before the list was paged, every poll read every agent at 0.5 units each.
 */
final class DashboardPoll {
    /** The poll that reads the page and the troubled statuses, one in this many. */
    static final int PAGE_EVERY = 5;
    /** Agents on the first page. */
    static final int PAGE = 100;
    /** Read units of a page of {@code n} agents: half a unit an agent (eventually consistent) and its roster entries. */
    static final double UNITS_PER_AGENT = 0.5;
    static final double ROSTER_UNITS = 1;
    /** An idle change query (six Queries of empty ranges), measured: 3 units. */
    static final double IDLE_CHANGES_UNITS = 3;
    /** Each agent that changed, read back: measured 510 units for 1,000 changes, 3 of them the idle queries. */
    static final double UNITS_PER_CHANGE = 0.507;
    /** An empty page of one status: one Query of the status index. */
    static final double EMPTY_STATUS_UNITS = 0.5;
    static final int TROUBLED_STATUSES = 3;
    /** A page of the team's events (its shards merged), measured: 4.5 units. */
    static final double EVENTS_UNITS = 4.5;
    static final double SETTINGS_UNITS = 1;

    private DashboardPoll() {
    }

    /**
     * Mean read units a poll on a team of {@code teamAgents} whose agents change status {@code changedPerPoll} times
     * between two polls.
     */
    static double readUnits(int teamAgents, double changedPerPoll) {
        double page = Math.min(teamAgents, PAGE) * UNITS_PER_AGENT + ROSTER_UNITS
                + TROUBLED_STATUSES * EMPTY_STATUS_UNITS + EVENTS_UNITS;
        double changes = IDLE_CHANGES_UNITS + changedPerPoll * UNITS_PER_CHANGE;
        double every = EVENTS_UNITS + SETTINGS_UNITS;
        return every + (page + (PAGE_EVERY - 1) * changes) / PAGE_EVERY;
    }

    /** Requests a poll, on average: 3 every poll, and on every fifth the page, 3 statuses and the bar for the changes. */
    static double requests() {
        return 3 + (1.0 + TROUBLED_STATUSES + 1 - 1) / PAGE_EVERY;
    }
}
