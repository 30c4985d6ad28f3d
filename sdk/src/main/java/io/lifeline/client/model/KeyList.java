package io.lifeline.client.model;

import java.util.List;

/** A team's keys (never their secrets). */
public record KeyList(List<ApiKey> keys) {
}
