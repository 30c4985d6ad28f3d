package io.lifeline.sweep;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.api.Json;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import io.lifeline.store.AgentStore;
import io.lifeline.store.SweepStore;
import io.lifeline.store.TeamStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The scheduled sweep. EventBridge schedules fire at most once a minute, so one invocation runs
 * {@code SWEEPS_PER_INVOCATION} sweeps spaced by {@code SWEEP_INTERVAL_MS} (4 x 15 s by default). A sweep
 * that did anything is logged as one JSON line; it answers the ids it marked dead.
 */
public final class SweepHandler implements RequestHandler<ScheduledEvent, List<String>> {
    private final Sweeper sweeper;
    private final Config config;

    public SweepHandler() {
        this(Wiring.fromEnvironment());
    }

    public SweepHandler(Wiring wiring) {
        this.config = wiring.config();
        String table = config.tableName();
        this.sweeper = new Sweeper(new SweepStore(wiring.dynamo(), table, config.sweepSegments()),
                new AgentStore(wiring.dynamo(), table), new TeamStore(wiring.dynamo(), table),
                new SweepPlan.Policy(config.selfPreservationThreshold(), config.selfPreservationMinAlive()),
                wiring.clock());
    }

    @Override
    public List<String> handleRequest(ScheduledEvent event, Context context) {
        List<String> dead = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < config.sweepsPerInvocation(); i++) {
            waitUntil(start + config.sweepInterval().multipliedBy(i).toNanos());
            Sweeper.Report report = sweeper.sweepOnce();
            dead.addAll(report.markedDead());
            if (!report.markedDead().isEmpty() || report.missesRecorded() > 0 || !report.teamsHeld().isEmpty()
                    || report.skippedOnError() > 0 || report.raceLostToHeartbeat() > 0) {
                log(report);
            }
        }
        return dead;
    }

    private static void waitUntil(long nanoTime) {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            try {
                Thread.sleep(Duration.ofNanos(wait).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static void log(Sweeper.Report r) {
        var line = io.lifeline.api.Log.line("INFO", "sweep").put("at", r.at().toString())
                .put("itemsScanned", r.itemsScanned()).put("aliveSeen", r.aliveSeen())
                .put("missesRecorded", r.missesRecorded()).put("raceLostToHeartbeat", r.raceLostToHeartbeat())
                .put("skippedOnError", r.skippedOnError()).put("consumedReadUnits", r.consumedReadUnits())
                .put("durationMs", r.took().toMillis());
        line.set("markedDead", Json.MAPPER.valueToTree(r.markedDead()));
        line.set("teamsHeld", Json.MAPPER.valueToTree(r.teamsHeld()));
        io.lifeline.api.Log.emit(line);
    }
}
