package io.lifeline.client.model;

import java.time.Instant;

/**
 * A key: {@code key} (the secret) is present only in the answer that created it; {@code mintedBy} is the id of
 * the operator key that minted it, for an admin key an operator minted.
 */
public record ApiKey(String keyId, String key, String scope, String label, Instant createdAt, String mintedBy) {
}
