package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.support.Json;
import java.io.InputStream;

/** Prices (USD) as in prices.json. */
public record Prices(double apiPerMillion, double lambdaPerMillion, double lambdaPerGbSecond,
                     double wruPerMillion, double rruPerMillion, double eventsPerMillion, double sfnPerThousand,
                     double sqsPerMillion, double schedulerPerMillion, double alarmPerMonth, double metricPerMonth,
                     double logsIngestPerGb, double logsStoragePerGbMonth, double xrayPerMillionTraces,
                     double storagePerGbMonth, double pitrPerGbMonth, double transferOutPerGb,
                     double archivePerGb, double archiveStoragePerGbMonth, double functionUrlPerMillion,
                     double scheduledRulePerMillion) {
    static Prices load() throws Exception {
        try (InputStream in = Prices.class.getResourceAsStream("/prices.json")) {
            JsonNode p = Json.MAPPER.readTree(in);
            return new Prices(p.get("apiGatewayHttpApiPerMillionRequests").asDouble(),
                    p.get("lambdaPerMillionRequests").asDouble(), p.get("lambdaArmPerGbSecond").asDouble(),
                    p.get("dynamoDbOnDemandPerMillionWriteUnits").asDouble(),
                    p.get("dynamoDbOnDemandPerMillionReadUnits").asDouble(),
                    p.get("eventBridgeCustomEventsPerMillion").asDouble(),
                    p.get("stepFunctionsStandardPerThousandTransitions").asDouble(),
                    p.get("sqsStandardPerMillionRequests").asDouble(),
                    p.get("eventBridgeSchedulerPerMillionInvocations").asDouble(),
                    p.get("cloudWatchAlarmPerMonth").asDouble(), p.get("cloudWatchCustomMetricPerMonth").asDouble(),
                    p.get("cloudWatchLogsIngestionPerGb").asDouble(),
                    p.get("cloudWatchLogsStoragePerGbMonth").asDouble(),
                    p.get("xrayPerMillionTracesRecorded").asDouble(),
                    p.get("dynamoDbStoragePerGbMonth").asDouble(), p.get("dynamoDbPitrPerGbMonth").asDouble(),
                    p.get("dataTransferOutPerGb").asDouble(), p.get("eventBridgeArchivePerGb").asDouble(),
                    p.get("eventBridgeArchiveStoragePerGbMonth").asDouble(),
                    p.get("lambdaFunctionUrlPerMillionRequests").asDouble(),
                    p.get("eventBridgeScheduledRuleOnDefaultBusPerMillion").asDouble());
        }
    }
}
