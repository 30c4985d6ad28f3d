package io.lifeline.client.model;

import java.util.List;

/** A team's recent events, newest first. */
public record EventList(int count, List<EventView> events) {
}
