package io.lifeline.client.model;

import java.time.Instant;

/** A key: {@code key} (the secret) is present only in the answer that created it. */
public record ApiKey(String keyId, String key, String scope, String label, Instant createdAt) {
}
