package io.lifeline.client.model;

import java.time.Instant;

/**
 * The filters of {@code GET /v1/teams/{team}/events}; a null field does not filter (a null limit is the server's
 * default, 50). {@code since} and {@code until} are inclusive; the server refuses since after until, and times
 * outside 1970..2286, with 400 {@code INVALID_QUERY}. Start from {@link #all()}:
 * {@code EventQuery.all().withAgent("agent-1").withSince(anHourAgo)}. {@code cursor} is a page's
 * {@link EventList#nextCursor}: the next page of the same query.
 */
public record EventQuery(Instant since, Instant until, String agentId, String type, Integer limit, String cursor) {

    public EventQuery(Instant since, Instant until, String agentId, String type, Integer limit) {
        this(since, until, agentId, type, limit, null);
    }

    public static EventQuery all() {
        return new EventQuery(null, null, null, null, null, null);
    }

    public EventQuery withSince(Instant t) {
        return new EventQuery(t, until, agentId, type, limit, cursor);
    }

    public EventQuery withUntil(Instant t) {
        return new EventQuery(since, t, agentId, type, limit, cursor);
    }

    /** Only the events about this agent (its own copy of them: one read, no filtering). */
    public EventQuery withAgent(String id) {
        return new EventQuery(since, until, id, type, limit, cursor);
    }

    /** Only events of this detail-type, e.g. AgentStatusChanged. */
    public EventQuery withType(String t) {
        return new EventQuery(since, until, agentId, t, limit, cursor);
    }

    public EventQuery withLimit(Integer n) {
        return new EventQuery(since, until, agentId, type, n, cursor);
    }

    /** The page after the one that answered {@code nextCursor} (null: the first page). */
    public EventQuery withCursor(String nextCursor) {
        return new EventQuery(since, until, agentId, type, limit, nextCursor);
    }
}
