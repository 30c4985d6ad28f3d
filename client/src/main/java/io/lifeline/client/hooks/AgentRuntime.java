package io.lifeline.client.hooks;

import java.util.Arrays;
import java.util.stream.Collectors;

/** The coding-agent runtimes whose own settings can carry Lifeline's hooks, by the names used on the wire. */
public enum AgentRuntime {
    CLAUDE_CODE("claude-code"), CODEX("codex"), GEMINI("gemini"), OPENCODE("opencode");

    private final String wire;

    AgentRuntime(String wire) {
        this.wire = wire;
    }

    /** The name in {@code lifeline hooks install NAME} and in the hook routes' {@code /hooks/NAME}. */
    public String wire() {
        return wire;
    }

    /** The runtime named {@code name}; an unknown name is an {@link IllegalArgumentException} listing the known. */
    public static AgentRuntime fromWire(String name) {
        for (AgentRuntime r : values()) {
            if (r.wire.equals(name)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown runtime '" + name + "' (known: " + names() + ")");
    }

    public static String names() {
        return Arrays.stream(values()).map(AgentRuntime::wire).collect(Collectors.joining(", "));
    }
}
