package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.support.Json;
import java.io.InputStream;

/**
 * Figure 6: dollars per agent-month at a 30 s heartbeat, from the measured units and request counts and the
 * prices in bench/prices.json. Pure arithmetic, so the unit tests check it.
 */
public final class CostModel {
    public static final double SECONDS_PER_MONTH = 30 * 86_400.0;

    /** Prices (USD) as in prices.json. */
    public record Prices(double apiPerMillion, double lambdaPerMillion, double lambdaPerGbSecond, double memoryGb,
                         double wruPerMillion, double rruPerMillion, double streamReadsPerMillion,
                         double eventsPerMillion, double sfnPerThousand) {
        static Prices load() throws Exception {
            try (InputStream in = CostModel.class.getResourceAsStream("/prices.json")) {
                JsonNode p = Json.MAPPER.readTree(in);
                return new Prices(p.get("apiGatewayHttpApiPerMillionRequests").asDouble(),
                        p.get("lambdaPerMillionRequests").asDouble(), p.get("lambdaArmPerGbSecond").asDouble(),
                        p.get("lambdaMemoryGb").asDouble(), p.get("dynamoDbOnDemandPerMillionWriteUnits").asDouble(),
                        p.get("dynamoDbOnDemandPerMillionReadUnits").asDouble(),
                        p.get("dynamoDbStreamsReadsFromLambdaTriggers").asDouble(),
                        p.get("eventBridgeCustomEventsPerMillion").asDouble(),
                        p.get("stepFunctionsStandardPerThousandTransitions").asDouble());
            }
        }
    }

    /**
     * What one agent uses. {@code agentsPerRequest} is 1 for a single agent, 10 for a daemon's batch;
     * {@code handlerMillis} the heartbeat function's billed duration per request (rounded up to whole ms).
     */
    public record Usage(double heartbeatSeconds, int agentsPerRequest, double writeUnitsPerBeat, double handlerMillis,
                        double authorizerCacheSeconds, double authorizerReadUnits, double sweepsPerMinute,
                        double sweepReadUnitsPerAgent, double deathsPerMonth, double eventsPerDeath,
                        double transitionsPerDeath, double streamRecordsPerPublisherInvocation) {
    }

    /** Dollars per agent-month, by line. */
    public record Cost(double api, double lambdaRequests, double lambdaCompute, double dynamoWrites, double dynamoReads,
                       double events, double stepFunctions, double total) {
    }

    public static Cost perAgentMonth(Usage u, Prices p) {
        double beats = SECONDS_PER_MONTH / u.heartbeatSeconds();
        double requests = beats / u.agentsPerRequest();
        double api = requests * p.apiPerMillion() / 1e6;
        // The authorizer runs once per key and cache period; a daemon's key serves all its agents.
        double authorizerRuns = SECONDS_PER_MONTH / u.authorizerCacheSeconds() / u.agentsPerRequest();
        // The publisher runs for the stream records heartbeats make (batched by the event source mapping).
        double publisherRuns = beats / u.streamRecordsPerPublisherInvocation();
        double invocations = requests + authorizerRuns + publisherRuns;
        double lambdaRequests = invocations * p.lambdaPerMillion() / 1e6;
        double billedMs = Math.ceil(u.handlerMillis()) ;
        double gbSeconds = (requests * billedMs + authorizerRuns * billedMs + publisherRuns * billedMs) / 1000.0
                * p.memoryGb();
        double lambdaCompute = gbSeconds * p.lambdaPerGbSecond();
        double dynamoWrites = beats * u.writeUnitsPerBeat() * p.wruPerMillion() / 1e6;
        double sweepUnits = u.sweepsPerMinute() * 60 * 24 * 30 * u.sweepReadUnitsPerAgent();
        double dynamoReads = (sweepUnits + authorizerRuns * u.authorizerReadUnits()) * p.rruPerMillion() / 1e6;
        double events = u.deathsPerMonth() * u.eventsPerDeath() * p.eventsPerMillion() / 1e6;
        double sfn = u.deathsPerMonth() * u.transitionsPerDeath() * p.sfnPerThousand() / 1e3;
        double total = api + lambdaRequests + lambdaCompute + dynamoWrites + dynamoReads + events + sfn;
        return new Cost(api, lambdaRequests, lambdaCompute, dynamoWrites, dynamoReads, events, sfn, total);
    }

    static void run(Report report, Measured m) throws Exception {
        Prices p = Prices.load();
        double wcu = Double.isNaN(m.heartbeatWriteUnits) ? 1.0 : m.heartbeatWriteUnits;
        double wcuBatch = Double.isNaN(m.batchedWriteUnitsPerAgent) ? 1.0 : m.batchedWriteUnitsPerAgent;
        double ms = Double.isNaN(m.handlerWarmMillis) ? 10.0 : Math.max(m.handlerWarmMillis, 1);
        double sweep = Double.isNaN(m.sweepReadUnitsPerAgent) ? 0.05 : m.sweepReadUnitsPerAgent;
        if (Double.isNaN(m.heartbeatWriteUnits) || Double.isNaN(m.handlerWarmMillis)
                || Double.isNaN(m.sweepReadUnitsPerAgent)) {
            report.note("cost model used assumed values for figures not measured in this run "
                    + "(1 WCU per beat, 10 ms handler, 0.05 RCU per agent per sweep)");
        }
        Usage single = new Usage(30, 1, wcu, ms, 300, 1, 4, sweep, 1, 3, 12, 100);
        // A batch of 10 costs about 10 heartbeats' handler time.
        Usage batched = new Usage(30, 10, wcuBatch, ms * 10, 300, 1, 4, sweep, 1, 3, 12, 100);
        Cost s = perAgentMonth(single, p);
        Cost b = perAgentMonth(batched, p);
        // Host leases (issue 13): one request and one lease write per host per beat; the handler's time assumed
        // twice a single heartbeat's (one write, N answers); one stream record per renewal (filtered out by the
        // outbox's FilterCriteria on AWS, so counted here as the batched case counts them, an upper bound).
        double w10 = Double.isNaN(m.hosted10WriteUnitsPerAgent) ? 0.1 : m.hosted10WriteUnitsPerAgent;
        double w25 = Double.isNaN(m.hosted25WriteUnitsPerAgent) ? 0.04 : m.hosted25WriteUnitsPerAgent;
        Usage hosted10 = new Usage(30, 10, w10, ms * 2, 300, 1, 4, sweep, 1, 3, 12, 100 * 10);
        Usage hosted25 = new Usage(30, 25, w25, ms * 2, 300, 1, 4, sweep, 1, 3, 12, 100 * 25);
        Cost h10 = perAgentMonth(hosted10, p);
        Cost h25 = perAgentMonth(hosted25, p);
        double floor = SECONDS_PER_MONTH / 30 * p.wruPerMillion() / 1e6;
        report.add("6", "$ per agent-month, single agent, 30 s beats", s.total(), "USD",
                "DynamoDB 1 WRU/beat alone", floor, "<= 0.10", s.total() <= 0.10);
        report.add("6", "$ per agent-month, daemon batching 10, 30 s", b.total(), "USD",
                "DynamoDB 1 WRU/beat alone", floor, "<= 0.06", b.total() <= 0.06);
        report.add("6", "$ per agent-month, host lease of 10, 30 s", h10.total(), "USD",
                "batched 10 today", b.total(), "<= 0.02", h10.total() <= 0.02);
        report.add("6", "$ per agent-month, host lease of 25, 30 s", h25.total(), "USD",
                "batched 10 today", b.total(), null, null);
        var d = report.details().putObject("costModel");
        d.set("hosted10Usage", Json.MAPPER.valueToTree(hosted10));
        d.set("hosted10", Json.MAPPER.valueToTree(h10));
        d.set("hosted25Usage", Json.MAPPER.valueToTree(hosted25));
        d.set("hosted25", Json.MAPPER.valueToTree(h25));
        System.out.println("  hosted 10: " + h10);
        System.out.println("  hosted 25: " + h25);
        d.set("prices", Json.MAPPER.valueToTree(p));
        d.set("singleUsage", Json.MAPPER.valueToTree(single));
        d.set("single", Json.MAPPER.valueToTree(s));
        d.set("batchedUsage", Json.MAPPER.valueToTree(batched));
        d.set("batched", Json.MAPPER.valueToTree(b));
        System.out.println("  single:  " + s);
        System.out.println("  batched: " + b);
    }
}
