package io.lifeline.engine;

import java.util.List;
import java.util.Map;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The exceptions the engine throws, built as the SDK builds them from DynamoDB's answers: the same classes, error
 * codes, status 400 and messages worded as AWS words them, so a caller's {@code catch} and its logs read the same
 * on the engine as on AWS.
 */
public final class Errors {
    private Errors() {
    }

    private static AwsErrorDetails details(String code, String message) {
        return AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("DynamoDb").build();
    }

    /** A request DynamoDB refuses as invalid (code {@code ValidationException}). */
    public static DynamoDbException validation(String message) {
        return (DynamoDbException) DynamoDbException.builder().message(message).statusCode(400)
                .awsErrorDetails(details("ValidationException", message)).build();
    }

    /** A feature the engine does not implement: refused, never answered wrongly. */
    public static DynamoDbException unsupported(String what) {
        return validation("The Lifeline engine does not implement " + what);
    }

    /** A table (or index) that does not exist. */
    public static ResourceNotFoundException notFound(String message) {
        return (ResourceNotFoundException) ResourceNotFoundException.builder().message(message).statusCode(400)
                .awsErrorDetails(details("ResourceNotFoundException", message)).build();
    }

    /** A table that already exists. */
    public static ResourceInUseException inUse(String message) {
        return (ResourceInUseException) ResourceInUseException.builder().message(message).statusCode(400)
                .awsErrorDetails(details("ResourceInUseException", message)).build();
    }

    /** A condition that did not hold; {@code item} is the item as it was, when the caller asked for it. */
    public static ConditionalCheckFailedException conditionFailed(Map<String, AttributeValue> item) {
        String message = "The conditional request failed";
        ConditionalCheckFailedException.Builder b = ConditionalCheckFailedException.builder();
        if (item != null) {
            b.item(item);
        }
        return (ConditionalCheckFailedException) b.message(message).statusCode(400)
                .awsErrorDetails(details("ConditionalCheckFailedException", message)).build();
    }

    /** A transaction refused, with one reason per action in request order, as AWS words its message. */
    public static TransactionCanceledException canceled(List<CancellationReason> reasons) {
        StringBuilder codes = new StringBuilder();
        for (CancellationReason r : reasons) {
            codes.append(codes.length() == 0 ? "" : ", ").append(r.code());
        }
        String message = "Transaction cancelled, please refer cancellation reasons for specific reasons [" + codes + "]";
        return (TransactionCanceledException) TransactionCanceledException.builder().cancellationReasons(reasons)
                .message(message).statusCode(400).awsErrorDetails(details("TransactionCanceledException", message))
                .build();
    }
}
