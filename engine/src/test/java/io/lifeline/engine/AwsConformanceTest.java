package io.lifeline.engine;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClientBuilder;

/**
 * The same suite against real DynamoDB, opt-in: set LIFELINE_CONFORMANCE_AWS_REGION (and, for another endpoint,
 * LIFELINE_CONFORMANCE_AWS_ENDPOINT); credentials come from the SDK's default chain. It creates tables named
 * {@code conf-aws-*}, on-demand, and deletes nothing it did not create (see docs/engine.md).
 */
@Tag("store")
class AwsConformanceTest implements Suite {
    private static DynamoDbClient client;
    private static DynamoDbStreamsClient streams;
    private static final List<String> CREATED = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() {
        String region = System.getenv("LIFELINE_CONFORMANCE_AWS_REGION");
        assumeTrue(region != null && !region.isBlank(),
                "real DynamoDB conformance is opt-in: set LIFELINE_CONFORMANCE_AWS_REGION (docs/engine.md)");
        DynamoDbClientBuilder b = DynamoDbClient.builder().region(Region.of(region))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .httpClient(UrlConnectionHttpClient.create());
        DynamoDbStreamsClientBuilder sb = DynamoDbStreamsClient.builder().region(Region.of(region))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .httpClient(UrlConnectionHttpClient.create());
        String endpoint = System.getenv("LIFELINE_CONFORMANCE_AWS_ENDPOINT");
        if (endpoint != null && !endpoint.isBlank()) {
            b.endpointOverride(URI.create(endpoint));
            sb.endpointOverride(URI.create(endpoint));
        }
        client = b.build();
        streams = sb.build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            for (String t : CREATED) {
                try {
                    client.deleteTable(r -> r.tableName(t));
                } catch (RuntimeException alreadyGone) {
                    // a case deleted it itself
                }
            }
            client.close();
            streams.close();
        }
    }

    @Override
    public String table(String sortType, String gsi, String streamViewType) {
        String t = Suite.super.table(sortType, gsi, streamViewType);
        client.waiter().waitUntilTableExists(r -> r.tableName(t));
        CREATED.add(t);
        return t;
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
        return "aws";
    }
}
