package io.lifeline.client.model;

import java.util.List;

/** A host's pending, unexpired commands, oldest first. */
public record HostCommands(int count, List<HostCommand> commands) {
}
