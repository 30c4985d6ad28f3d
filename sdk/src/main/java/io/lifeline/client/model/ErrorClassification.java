package io.lifeline.client.model;

import java.util.List;

/**
 * The error-handling protocol's answer to a reported error: category context_limit|transient|unknown and what to do.
 */
public record ErrorClassification(String category, String action, List<Integer> retryDelaysSeconds) {
}
