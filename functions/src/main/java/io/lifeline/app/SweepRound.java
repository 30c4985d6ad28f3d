package io.lifeline.app;

import io.lifeline.store.sweep.SweepRounds;
import io.lifeline.store.sweep.SweepStore;
import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

/**
 * One sweep fanned out over {@code of} invocations (a round; docs/scale.md, "The sweep's parts"). The invocation due
 * at a sweep begins it: it reads the round's instant once, has parts {@code 1..of-1} sent to the sweep's queue and
 * runs part 0 itself. A part scans its share of the Scan's segments, counting each plain alive agent it hears in its
 * own census and shipping every other item it read (teams, the fleet, leases and the agents that name one, waits,
 * progress, revives, and the stale agents) to the round on the ledger table; then it counts itself done. The part
 * that completes the set decides: it merges every part's counters and items into one intake, judged at the round's
 * instant, and runs the one sweep's steps over it ({@link Sweeper}), so a round decides and writes exactly what one
 * invocation's sweep would. A round whose part never arrives decides nothing and writes nothing (its census would be
 * partial: a false mass death is worse than a skipped sweep); the next round's beginning counts it.
 */
public final class SweepRound {
    /** Part {@code part} of the round at {@code round} (its instant, the judging time) of {@code of} parts. */
    public record Part(Instant round, int part, int of) {
    }

    /**
     * What one part did: the items it read and shipped ({@code itemBytes}: their estimated size as attribute maps;
     * {@code bytesShipped} and {@code writeUnits}: what its compressed chunks cost), and, when it completed the round
     * and decided it, the round's report (null otherwise). {@code superseded}: a later round had begun, so it did
     * nothing.
     */
    public record Done(Part part, int itemsScanned, int itemsShipped, long itemBytes, long bytesShipped,
                       long writeUnits, boolean superseded, Sweeper.Report report) {
    }

    private final Sweeper sweeper;
    private final SweepRounds rounds;
    /** The Scan's segments per part; a round reads {@code of} times as many. */
    private final int segmentsPerPart;

    public SweepRound(Sweeper sweeper, SweepRounds rounds, int segmentsPerPart) {
        this.sweeper = sweeper;
        this.rounds = rounds;
        this.segmentsPerPart = Math.max(1, segmentsPerPart);
    }

    /**
     * Begins a round of {@code of} parts at {@code now}: answers the parts to send ({@code 1..of-1}) and how many
     * parts the round begun before it lacked, if it was never decided.
     */
    public Begun begin(Instant now, int of) {
        int missing = rounds.begin(now, of);
        return new Begun(IntStream.range(1, of).mapToObj(i -> new Part(now, i, of)).toList(), missing);
    }

    /** The parts a round's beginning sends, and the parts the round before it lacked (0: it was whole). */
    public record Begun(List<Part> toSend, int previousMissing) {
    }

    /**
     * Runs one part: scans its segments, ships what it read, counts itself done; decides if it completed the set. A
     * part of a round a later one has superseded does nothing: that round will not be decided, and its census would
     * be older than the one the later round takes.
     */
    public Done run(Part p) {
        long started = System.nanoTime();
        if (!rounds.current(p.round())) {
            return new Done(p, 0, 0, 0, 0, 0, true, null);
        }
        SweepIntake mine = new SweepIntake(p.round(), sweeper.graceFrom);
        SweepRounds.Shipment shipment = new SweepRounds.Shipment();
        SweepStore.Totals read = sweeper.store.scanPart(mine, mine::countsHere, shipment,
                p.part() * segmentsPerPart, segmentsPerPart, p.of() * segmentsPerPart);
        mine.finish();
        SweepRounds.Sent sent = rounds.ship(p.round(), p.part(), mine.census().counts(), read, shipment);
        boolean decides = rounds.done(p.round(), p.part(), p.of());
        Sweeper.Report report = decides ? decide(p, started) : null;
        return new Done(p, read.itemsScanned(), shipment.size(), shipment.bytes(), sent.bytes(), sent.writeUnits(),
                false, report);
    }

    /**
     * The round's decision, by the part that completed it: every part's shipment merged into one intake at the
     * round's instant, then the one sweep's steps. Null when a part's shipment cannot be read whole (nothing written).
     */
    private Sweeper.Report decide(Part p, long started) {
        SweepIntake merged = new SweepIntake(p.round(), sweeper.graceFrom);
        List<SweepRounds.Shipped> parts = rounds.collect(p.round(), merged);
        if (parts.size() != p.of()) {
            return null;
        }
        parts.forEach(s -> merged.addPart(s.counts(), s.itemsScanned(), s.readUnits()));
        merged.finish();
        return sweeper.decide(merged, new Sweeper.Scanned(merged.itemsScanned(), merged.census().alive(),
                merged.consumedReadUnits()), started);
    }
}
