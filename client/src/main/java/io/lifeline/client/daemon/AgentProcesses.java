package io.lifeline.client.daemon;

/** The daemon's view of the agents' processes, supplied by the user (or {@link CommandProcesses}). */
public interface AgentProcesses {
    /** Whether the agent's process is running now; false tells the daemon it exited (a crash). */
    boolean isRunning(String agentId);

    /** Starts the agent's process again, stopping the old one if it still runs. */
    void restart(String agentId, String reason) throws Exception;

    /**
     * How the agent's last process ended, for a person (e.g. "exited with status 3: boom", with the last line
     * the process wrote to stderr), or
     * null when unknown. The daemon puts it in the crash report's reason.
     */
    default String exitDescription(String agentId) {
        return null;
    }

    /**
     * The exit status of the agent's last process, or null while it runs or when unknown. Status 0 is a command that
     * finished (its agent leaves, no crash); any other status, and an unknown one, is a crash.
     */
    default Integer exitCode(String agentId) {
        return null;
    }

    /**
     * Which start of the agent's process runs now (0 for the first, one more for each restart), so a signal
     * received from an earlier one (a hook sent while it was being stopped) is told apart; 0 when unknown.
     */
    default long generation(String agentId) {
        return 0;
    }

    /** The runtime session the agent's process runs, as its hooks named it (kept with the process's record). */
    default void session(String agentId, String session) {
    }

    /**
     * The session id of the agent's process tree (its command runs under {@code setsid}, so it is the command's pid),
     * whose TCP connections are sampled for progress; -1 when unknown (its hooks alone then show progress).
     */
    default long sessionId(String agentId) {
        return -1;
    }

    /**
     * Stops the agent's process tree abort-first, because it stalled: TERM to its group, KILL after a grace, without
     * waiting. Unlike {@link #restart}, its exit is then seen as any exit is (reported dead, restarted by the crash
     * loop's rules).
     */
    default void abort(String agentId) {
    }
}
