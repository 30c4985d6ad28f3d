package io.lifeline.events;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.lifeline.app.FlapCheck;
import io.lifeline.config.UseCases;
import io.lifeline.config.Wiring;
import io.lifeline.support.Log;
import java.time.Instant;
import java.util.Map;

/**
 * A flapping agent's check (docs/alerts-noise.md): the flap-check flow's Lambda adapter, started by the agent's
 * {@code AgentFlapping}, on a function and a flow of its own so that no burst's digest delays it. It reads the flow's
 * input (team, agent, the flag's time) and answers what {@link FlapCheck} (io.lifeline.app) decides: the flag ended
 * and its resolve sent, or {@code again} with the time to check next. A failure throws, and the flow's Retry runs
 * the check again.
 */
public final class FlapCheckHandler implements RequestHandler<Map<String, Object>, Map<String, Object>> {
    private final FlapCheck check;

    public FlapCheckHandler() {
        this(Wiring.fromEnvironment());
    }

    public FlapCheckHandler(Wiring wiring) {
        this.check = new UseCases(wiring).flapCheck();
    }

    @Override
    public Map<String, Object> handleRequest(Map<String, Object> input, Context context) {
        long started = System.nanoTime();
        try (Log.Invocation ignored = Log.invocation(context == null ? null : context.getAwsRequestId(),
                "flapCheck")) {
            return check.check(String.valueOf(input.get("team")), String.valueOf(input.get("agentId")),
                    Instant.parse(String.valueOf(input.get("since"))), started);
        }
    }
}
