package io.lifeline.client.model;

import java.util.List;

/**
 * A page of a team's events, newest first; {@code nextCursor}, when older events remain, is given back as
 * {@link EventQuery#withCursor} for the next page (null on the last).
 */
public record EventList(int count, List<EventView> events, String nextCursor) {
    public EventList(int count, List<EventView> events) {
        this(count, events, null);
    }
}
