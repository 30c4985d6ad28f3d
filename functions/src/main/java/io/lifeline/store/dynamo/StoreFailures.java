package io.lifeline.store.dynamo;

import io.lifeline.agent.LifelineException;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;

/**
 * Turns the store's own failures (throttling, the service out of reach) into {@link LifelineException}s
 * that answer 503 with Retry-After. Condition failures are handled where they happen, never here.
 */
public final class StoreFailures {
    private StoreFailures() {
    }

    public static <T> T call(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (ProvisionedThroughputExceededException | RequestLimitExceededException e) {
            throw throttled(what, e);
        } catch (DynamoDbException e) {
            if (e.isThrottlingException() || "ThrottlingException".equals(errorCode(e))) {
                throw throttled(what, e);
            }
            if (e.statusCode() >= 500) {
                throw unavailable(what, e);
            }
            throw e;
        } catch (SdkClientException e) {
            throw unavailable(what, e);
        }
    }

    private static String errorCode(DynamoDbException e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    public static LifelineException throttled(String what, Exception cause) {
        return new LifelineException(LifelineException.Kind.THROTTLED, "THROTTLED",
                "The store is busy; " + what + " was not written. Retry after the delay given.", null, cause);
    }

    private static LifelineException unavailable(String what, Exception cause) {
        return new LifelineException(LifelineException.Kind.UNAVAILABLE, "STORE_UNAVAILABLE",
                "Failed to " + what + ": the store did not answer. Retry after the delay given.", null, cause);
    }
}
