package io.lifeline.agent;

import java.util.Optional;

/**
 * Where a heartbeat came from. The SDK event sources imply a status: an idle session means the
 * agent is ready, an updated session or a finished tool call means it is working.
 */
public enum HeartbeatSource {
    TOOL("tool", null),
    SDK_SESSION_IDLE("sdk_session_idle", AgentStatus.READY),
    SDK_SESSION_UPDATED("sdk_session_updated", AgentStatus.WORKING),
    SDK_TOOL_EXECUTE("sdk_tool_execute", AgentStatus.WORKING);

    private final String wire;
    private final AgentStatus implied;

    HeartbeatSource(String wire, AgentStatus implied) {
        this.wire = wire;
        this.implied = implied;
    }

    public String wire() {
        return wire;
    }

    /** The status this source implies, or null. */
    public AgentStatus implied() {
        return implied;
    }

    public static Optional<HeartbeatSource> fromWire(String value) {
        for (HeartbeatSource s : values()) {
            if (s.wire.equals(value)) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
