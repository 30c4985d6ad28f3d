package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import io.lifeline.app.OutboxRepairs;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Instant;
import java.util.Map;

/**
 * The outbox's repair, on a schedule (and by hand: {@code aws lambda invoke}): the Lambda adapter of
 * {@link OutboxRepairs} (re-drive parked records, replay unfinished transitions, delete agents past the offline
 * retention), which writes its line and metrics.
 */
public final class OutboxRepairHandler implements RequestHandler<ScheduledEvent, Map<String, Object>> {
    private final OutboxRepairs repairs;

    public OutboxRepairHandler() {
        this(Wiring.fromEnvironment());
    }

    public OutboxRepairHandler(Wiring wiring) {
        this.repairs = new UseCases(wiring).outboxRepairs();
    }

    @Override
    public Map<String, Object> handleRequest(ScheduledEvent event, Context context) {
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "repair")) {
            OutboxRepairs.Run run = repairs.run();
            Instant now = run.at();
            int redriven = run.redriven();
            int replays = run.replays();
            var line = Log.line(redriven + replays > 0 ? "WARN" : "INFO", "outbox repair")
                    .put("outcome", redriven + replays > 0 ? "repaired" : "ok")
                    .put("redriven", redriven).put("replays", replays).put("agentsRetired", run.agentsRetired());
            Metrics.on(line, Metrics.PUBLISHER_FUNCTION, now).count(Metrics.RECORDS_REDRIVEN, redriven)
                    .count(Metrics.REPLAYS_STAMPED, replays).emit();
            return Map.of("redriven", redriven, "replays", replays, "agentsRetired", run.agentsRetired());
        }
    }
}
