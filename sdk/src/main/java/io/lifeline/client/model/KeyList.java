package io.lifeline.client.model;

import java.util.List;

/** A page of a team's keys (never their secrets); {@code nextCursor} reads the next (null: the last, or all). */
public record KeyList(List<ApiKey> keys, String nextCursor) {
    public KeyList(List<ApiKey> keys) {
        this(keys, null);
    }
}
