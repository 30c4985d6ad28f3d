package io.lifeline.app;

import io.lifeline.store.agent.HostCommandStore;
import java.time.Instant;
import java.util.List;

/**
 * The restart channel's pull side, for daemons behind NAT: a host reads its pending commands and acknowledges each
 * once. The commands themselves are issued by the revive flow ({@code ReviveHandler}).
 */
public final class HostCommands {
    private final HostCommandStore commands;

    public HostCommands(HostCommandStore commands) {
        this.commands = commands;
    }

    /** The host's commands not yet acknowledged nor expired, oldest first. */
    public List<HostCommandStore.Command> pending(String team, String hostId, Instant now) {
        return commands.pending(team, hostId, now);
    }

    /** Acknowledges one command; a second acknowledgement answers the first's result. */
    public HostCommandStore.Command ack(String team, String hostId, String commandId, Instant now) {
        return commands.ack(team, hostId, commandId, now);
    }
}
