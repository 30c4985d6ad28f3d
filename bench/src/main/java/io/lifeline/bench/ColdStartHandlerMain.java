package io.lifeline.bench;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.lifeline.api.HeartbeatHandler;
import io.lifeline.config.Config;
import io.lifeline.config.Wiring;
import java.net.URI;
import java.time.Clock;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Figure 4's measured process: a fresh JVM on the deployment jar alone builds the heartbeat handler as
 * Lambda would (client at init) and answers one heartbeat. Prints "READY initMs firstMs" (from main's start).
 * Args: endpoint table team agentId [warm]: with a fifth argument n, it then answers n more heartbeats and
 * prints "WARM totalMs" for them, the steady state that the JIT flags decide.
 */
public final class ColdStartHandlerMain {
    private ColdStartHandlerMain() {
    }

    public static void main(String[] args) {
        long start = System.nanoTime();
        DynamoDbClient dynamo = DynamoDbClient.builder().endpointOverride(URI.create(args[0])).region(Region.US_EAST_1)
                .httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
        HeartbeatHandler handler = new HeartbeatHandler(new Wiring(Config.fromEnvironment(Map.of("LIVE_TABLE", args[1] + "-live",
                "LEDGER_TABLE", args[1] + "-ledger")),
                Clock.systemUTC(), dynamo));
        long init = System.nanoTime();
        APIGatewayV2HTTPEvent event = APIGatewayV2HTTPEvent.builder().withVersion("2.0")
                .withRouteKey("POST /v1/teams/{team}/agents/{agentId}/heartbeat")
                .withPathParameters(Map.of("team", args[2], "agentId", args[3])).withBody("{}")
                .withRequestContext(APIGatewayV2HTTPEvent.RequestContext.builder().withRequestId("cold")
                        .withAuthorizer(APIGatewayV2HTTPEvent.RequestContext.Authorizer.builder()
                                .withLambda(Map.of("team", args[2], "scope", "agent")).build()).build())
                .build();
        APIGatewayV2HTTPResponse r = handler.handleRequest(event, null);
        long first = System.nanoTime();
        if (r.getStatusCode() != 200) {
            System.out.println("FAILED " + r.getStatusCode() + " " + r.getBody());
            System.exit(1);
        }
        if (args.length > 4) {
            int n = Integer.parseInt(args[4]);
            long warmStart = System.nanoTime();
            for (int i = 0; i < n; i++) {
                if (handler.handleRequest(event, null).getStatusCode() != 200) {
                    System.out.println("FAILED warm heartbeat " + i);
                    System.exit(1);
                }
            }
            System.out.println("WARM " + (System.nanoTime() - warmStart) / 1_000_000);
        }
        System.out.println("READY " + (init - start) / 1_000_000 + " " + (first - start) / 1_000_000);
    }
}
