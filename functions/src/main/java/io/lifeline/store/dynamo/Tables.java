package io.lifeline.store.dynamo;

import java.util.Objects;

/**
 * The two tables. {@code live}: agent and team items only, small, with the stream the
 * outbox reads; the sweep scans it and nothing else, so its cost follows the number of agents, never their
 * history. {@code ledger}: everything that accumulates (transition records, the event log, inbox notices,
 * revivals, restart commands, side data, keys, tasks), with TTL and no stream; never scanned on a schedule.
 */
public record Tables(String live, String ledger) {
    public Tables {
        Objects.requireNonNull(live, "live");
        Objects.requireNonNull(ledger, "ledger");
        if (live.equals(ledger)) {
            throw new IllegalArgumentException("the live and ledger tables must differ: " + live);
        }
    }
}
