package io.lifeline.client.model;

import java.time.Instant;
import java.util.List;

/** An inbox notice, e.g. to a team leader about an agent that went inactive. */
public record Notice(String noticeId, String aboutAgentId, String message, List<String> tasksHandedBack,
        Instant at) {
}
