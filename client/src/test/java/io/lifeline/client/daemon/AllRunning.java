package io.lifeline.client.daemon;

/**
 * Agent processes that all run, for tests in which the daemon must see no crash (only what its client, or the local
 * beats, say): a restart is a failure of the test.
 */
public final class AllRunning implements AgentProcesses {
    @Override
    public boolean isRunning(String agentId) {
        return true;
    }

    @Override
    public void restart(String agentId, String reason) {
        throw new AssertionError("nothing exits here");
    }
}
