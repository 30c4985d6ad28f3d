package io.lifeline.app;

import java.util.List;
import java.util.Set;

/**
 * The application layer's port to the event bus: the outbox's use case puts its events through it, and its adapter on
 * AWS ({@code io.lifeline.aws.EventBridgePublisher}) sends them with PutEvents, entry by entry checked.
 */
public interface EventBus {
    /** What one {@link #send} did: events this call put on the bus, and those still not there. */
    record Outcome(int put, Set<String> unsent) {
    }

    /** Sends {@code events}; answers how many went and the ids still not on the bus after every retry. */
    Outcome send(List<LifelineEvent> events);
}
