package io.lifeline.client.manager;

/** Told of every heartbeat, on the manager's thread; keep it quick. */
@FunctionalInterface
public interface HeartbeatListener {
    void onHeartbeat(HeartbeatEvent event);
}
