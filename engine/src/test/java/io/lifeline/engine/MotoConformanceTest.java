package io.lifeline.engine;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The same suite against moto's server (the oracle the engine is held to), through the real SDK client over HTTP.
 * Skipped, saying why, only when python3 or moto is missing; CI has both.
 */
@Tag("store")
class MotoConformanceTest implements Suite {
    private static MotoServer server;
    private static DynamoDbClient client;
    private static DynamoDbStreamsClient streams;

    @BeforeAll
    static void start() throws Exception {
        String missing = MotoServer.missing();
        assumeTrue(missing == null, () -> "moto conformance skipped: " + missing);
        server = MotoServer.start();
        client = DynamoDbClient.builder().endpointOverride(server.endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
        // moto serves DynamoDB Streams on the same server (it routes by the X-Amz-Target header)
        streams = DynamoDbStreamsClient.builder().endpointOverride(server.endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (streams != null) {
            streams.close();
        }
        if (server != null) {
            server.close();
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

    @Override
    public String target() {
        return "moto";
    }
}
