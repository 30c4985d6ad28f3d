package io.lifeline.hooks;

import java.util.Optional;

/** The agent runtimes whose own hook events Lifeline takes, by the name their routes and installers use. */
public enum HookRuntime {
    CLAUDE_CODE("claude-code"),
    CODEX("codex"),
    GEMINI("gemini"),
    OPENCODE("opencode");

    private final String wire;

    HookRuntime(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    public static Optional<HookRuntime> fromWire(String text) {
        for (HookRuntime r : values()) {
            if (r.wire.equals(text)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }
}
