package io.lifeline.hooks;

/** What a runtime's hook event means for the agent's liveness; {@link HookMapping} decides it per runtime. */
public enum HookSignal {
    /** A session started: the agent joins (ready), or, already alive, it beats. */
    SESSION_STARTED,
    /** A prompt, the model or the turn is at work: working, under the working allowance. */
    ACTIVE,
    /** A tool call starts: working, under the working allowance (a 10-minute test run is not a death). */
    TOOL,
    /**
     * A tool call failed: reported to the errors route when its error is a context limit or an API error (the
     * session may need rotating or a retry), else plain activity.
     */
    TOOL_FAILED,
    /** The turn ended: ready, waiting for its next prompt, under the waiting-for-input allowance. */
    TURN_ENDED,
    /** A permission prompt or question is shown: waiting for a person, under the waiting-for-a-person allowance. */
    WAITING_FOR_PERSON,
    /** The turn failed (an API error, a context limit): the errors route, and the agent waits for input. */
    FAILED,
    /** The context was compacted: noted (counted), and the turn goes on. */
    COMPACTED,
    /** The session ended: the agent leaves (offline). */
    SESSION_ENDED,
    /**
     * The runtime's process is gone and its session never ended (killed, crashed): the agent is reported dead, as a
     * host reports a crash. Sent by the watcher a direct-mode session-start hook leaves behind, not by a runtime.
     */
    RUNTIME_EXITED,
    /** Nothing for liveness (configuration, file watching, display events): answered, not written. */
    IGNORED
}
