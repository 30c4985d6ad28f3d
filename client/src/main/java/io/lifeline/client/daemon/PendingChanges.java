package io.lifeline.client.daemon;

import io.lifeline.client.model.BatchEntry;

/**
 * What of one agent the server has not taken yet, as one value: the daemon's stall judgement (held against the one
 * the server last took, {@code stallTaken}), a park or its end, and its running subagents. Each is sent only when it
 * changed, as one write of the agent's item, so a hosted agent's plain beats stay answered by the host lease; what an
 * accepted entry carried is taken ({@link #taken}), and a refused entry takes nothing, so it is sent again. A change
 * made while a beat was on its way stays to be sent: only what equals what was sent is taken.
 *
 * @param stallTaken the stall judgement the server last took (true, false), or null: none sent this life
 * @param park a park or its end ({@link BatchEntry.Park#RESUMED}) not taken yet, or null
 * @param subagents the running subagents not taken yet (they changed), or null
 */
record PendingChanges(Boolean stallTaken, BatchEntry.Park park, BatchEntry.Subagents subagents) {
    /** Nothing to send. */
    static final PendingChanges NONE = new PendingChanges(null, null, null);

    /**
     * What one batch entry carries of them: the stall change (true: stalled; false: no longer; null: no change), the
     * park, the subagents; null is nothing of that kind.
     */
    record Sent(Boolean stall, BatchEntry.Park park, BatchEntry.Subagents subagents) {
    }

    /** With a park (or its end) to send. */
    PendingChanges withPark(BatchEntry.Park p) {
        return new PendingChanges(stallTaken, p, subagents);
    }

    /** With a changed set of running subagents to send. */
    PendingChanges withSubagents(BatchEntry.Subagents s) {
        return new PendingChanges(stallTaken, park, s);
    }

    /** A new life: its join ends the last life's stall on the server, so none is taken. */
    PendingChanges newLife() {
        return new PendingChanges(null, park, subagents);
    }

    /**
     * The stall change for the daemon's judgement ({@code stalled}) when it differs from what the server took (true:
     * stalled, sent only with the progress age it was judged from, {@code ageKnown}; false: no longer), else null:
     * only a change writes the agent's item, so a stalled agent's later beats cost what any hosted beat costs.
     */
    Boolean stallChange(boolean stalled, boolean ageKnown) {
        if (stalled == Boolean.TRUE.equals(stallTaken) || stalled && !ageKnown) {
            return null;
        }
        return stalled;
    }

    /** After the server accepted an entry carrying {@code sent}: each part taken unless it changed since. */
    PendingChanges taken(Sent sent) {
        return new PendingChanges(sent.stall() != null ? sent.stall() : stallTaken,
                sent.park() != null && sent.park().equals(park) ? null : park,
                sent.subagents() != null && sent.subagents().equals(subagents) ? null : subagents);
    }
}
