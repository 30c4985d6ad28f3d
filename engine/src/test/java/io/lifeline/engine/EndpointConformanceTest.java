package io.lifeline.engine;

import io.lifeline.engine.endpoint.Endpoint;
import java.time.Clock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The conformance suite against the engine served as an endpoint on loopback ({@link Endpoint}), through the real
 * SDK client (url-connection-client) over HTTP: every case must answer as in process, so the wire form (requests
 * read, responses and errors written) loses nothing the SDK carries.
 */
@Tag("store")
class EndpointConformanceTest implements Suite {
    private static Endpoint endpoint;
    private static DynamoDbClient client;
    private static DynamoDbStreamsClient streams;

    @BeforeAll
    static void start() throws Exception {
        endpoint = Endpoint.start(new Engine(Clock.systemUTC()), 0);
        client = DynamoDbClient.builder().endpointOverride(endpoint.uri()).region(Region.EU_WEST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("any", "thing")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
        streams = DynamoDbStreamsClient.builder().endpointOverride(endpoint.uri()).region(Region.EU_WEST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("any", "thing")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (streams != null) {
            streams.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
    }

    @Override
    public DynamoDbClient db() {
        return client;
    }

    @Override
    public DynamoDbStreamsClient streams() {
        return streams;
    }

    /** The engine's answers, over the wire: cases that hold the engine to AWS's pages hold here too. */
    @Override
    public String target() {
        return "engine";
    }
}
