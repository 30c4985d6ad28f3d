package io.lifeline.bench;

import java.net.URI;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Figure 4's reference process: the minimal handler, a DynamoDbClient and one conditional UpdateItem, on the
 * same jar. Prints "READY initMs firstMs". Args: endpoint table pk sk.
 */
public final class ColdStartBareMain {
    private ColdStartBareMain() {
    }

    public static void main(String[] args) {
        long start = System.nanoTime();
        DynamoDbClient dynamo = DynamoDbClient.builder().endpointOverride(URI.create(args[0])).region(Region.US_EAST_1)
                .httpClient(UrlConnectionHttpClient.create())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
        long init = System.nanoTime();
        dynamo.updateItem(u -> u.tableName(args[1])
                .key(Map.of("pk", AttributeValue.fromS(args[2]), "sk", AttributeValue.fromS(args[3])))
                .updateExpression("SET #h = :now").conditionExpression("attribute_exists(#pk)")
                .expressionAttributeNames(Map.of("#h", "hbAt", "#pk", "pk"))
                .expressionAttributeValues(Map.of(":now", AttributeValue.fromN(Long.toString(System.currentTimeMillis())))));
        long first = System.nanoTime();
        System.out.println("READY " + (init - start) / 1_000_000 + " " + (first - start) / 1_000_000);
    }
}
