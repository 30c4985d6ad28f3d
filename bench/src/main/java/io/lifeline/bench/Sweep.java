package io.lifeline.bench;

/**
 * Section 2's figures the bill uses, as one input: read units per alive agent per sweep with and without 30 days
 * of history on the ledger, the busy agent's live item, and its history's bytes. {@link #PUBLISHED} holds the
 * last published run; a run of section 2 replaces it.
 */
public record Sweep(double unitsWithHistory, double unitsWithoutHistory, double itemBytes,
                    double historyBytesPerAgent) {
    /**
     * BENCHMARKS.md section 2 as last published (2026-11-25, busy 231-byte item: 0.0284 RCU with history at 100,000
     * agents, 0.029 at 1,000). Update this one line when section 2 republishes.
     */
    static final Sweep PUBLISHED = new Sweep(0.0284, 0.029, 231, 681_207);
}
