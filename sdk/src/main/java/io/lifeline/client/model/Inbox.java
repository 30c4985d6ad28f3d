package io.lifeline.client.model;

import java.util.List;

/** An agent's notices, newest first. */
public record Inbox(String agentId, List<Notice> messages) {
}
