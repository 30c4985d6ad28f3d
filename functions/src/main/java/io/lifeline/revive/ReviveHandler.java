package io.lifeline.revive;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.agent.LifelineException;
import io.lifeline.app.ReviveFlow;
import io.lifeline.app.ReviveOutcome;
import io.lifeline.app.ReviveStep;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Json;
import io.lifeline.support.Log;
import io.lifeline.support.Metrics;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The revive flow's Task steps' Lambda adapter (infra/statemachine/revive.asl.json): reads the step the state
 * machine sends, runs it through {@link ReviveFlow}, writes its line and metric, and turns a store throttled or out
 * of reach into {@link TransientReviveException}, the error the state machine retries.
 */
public final class ReviveHandler implements RequestHandler<Map<String, Object>, Map<String, Object>> {
    private final ReviveFlow flow;
    private final Clock clock;

    public ReviveHandler() {
        this(Wiring.fromEnvironment());
    }

    public ReviveHandler(Wiring wiring) {
        this(new UseCases(wiring).reviveFlow(), wiring.clock());
    }

    public ReviveHandler(ReviveFlow flow, Clock clock) {
        this.flow = flow;
        this.clock = clock;
    }

    @Override
    public Map<String, Object> handleRequest(Map<String, Object> input, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(), "revive")) {
            ReviveStep step = null;
            try {
                step = ReviveStep.of(input);
                ReviveFlow.Answer answer = run(step);
                log(step, answer.stepAttempt(), input, answer.out().get("outcome").toString(), null, started);
                return answer.out();
            } catch (RuntimeException e) {
                log(step, step == null ? 0 : step.attempt(), input, "exception", e, started);
                throw e;
            }
        }
    }

    private ReviveFlow.Answer run(ReviveStep step) {
        try {
            return flow.run(step);
        } catch (LifelineException e) {
            if (e.kind() == LifelineException.Kind.THROTTLED || e.kind() == LifelineException.Kind.UNAVAILABLE) {
                throw new TransientReviveException(e.getMessage(), e);
            }
            throw e;
        }
    }

    /**
     * The step's one line and metric: ReviveOutcomes by step and outcome, in the words of {@link ReviveOutcome}
     * (initiate: restart_requested, host_restarting, no_host, revived, superseded; check: revived, retry, exhausted,
     * superseded; giveUp: failed, revived, superseded; recordError: error). The line's {@code attempt} is the one the
     * step was about, as {@code GET .../revivals} records it. A step that threw logs outcome {@code exception} (the
     * state machine retries or records it).
     */
    private void log(ReviveStep step, int attempt, Map<String, Object> input, String outcome,
                     RuntimeException failure, long started) {
        String level = failure == null ? "INFO" : failure instanceof TransientReviveException ? "WARN" : "ERROR";
        ObjectNode line = Log.line(level, "revive");
        Object action = step != null ? step.action() : input == null ? null : input.get("action");
        Json.putIfPresent(line, "team", step != null ? step.team() : null);
        Json.putIfPresent(line, "agentId", step != null ? step.agentId() : null);
        Json.putIfPresent(line, "executionId", step != null ? step.executionId() : null);
        if (step != null) {
            line.put("attempt", attempt);
        }
        line.put("outcome", outcome);
        Json.putIfPresent(line, "error", failure == null ? null : failure.toString());
        line.put("durationMs", Duration.ofNanos(System.nanoTime() - started).toMillis());
        Map<String, String> dims = new LinkedHashMap<>();
        dims.put(Metrics.STEP, action == null ? "unknown" : action.toString());
        dims.put(Metrics.OUTCOME, outcome);
        // recordError's outcome: the flow caught an error its retries did not fix, a revive that broke (a fault).
        Metrics.on(line, Metrics.REVIVE_FUNCTION, clock.instant())
                .put(Metrics.REVIVE_OUTCOMES, Metrics.Unit.COUNT, 1, dims)
                .fault("error".equals(outcome) ? 1 : 0).emit();
    }
}
