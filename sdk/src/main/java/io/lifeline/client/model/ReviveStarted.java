package io.lifeline.client.model;

/** A started revive execution (202). */
public record ReviveStarted(String executionArn, String executionName, long startSeq) {
}
