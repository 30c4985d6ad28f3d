package io.lifeline.store.dynamo;

import io.lifeline.agent.LifelineException;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** What a cancelled transaction means when no condition of ours explains it. */
public final class Transactions {
    private Transactions() {
    }

    public static LifelineException failure(String what, TransactionCanceledException e) {
        for (CancellationReason reason : e.cancellationReasons()) {
            if ("ThrottlingError".equals(reason.code()) || "ProvisionedThroughputExceeded".equals(reason.code())) {
                return StoreFailures.throttled(what, e);
            }
        }
        // TransactionConflict: another transaction on the same items; the caller may simply retry.
        return new LifelineException(LifelineException.Kind.UNAVAILABLE, "CONTENDED",
                "Another change to the same items was in progress; " + what + " was not written. Retry.", null, e);
    }

    public static boolean failedCondition(CancellationReason reason) {
        return "ConditionalCheckFailed".equals(reason.code());
    }
}
