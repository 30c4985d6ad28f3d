package io.lifeline.store;

import io.lifeline.agent.LifelineException;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** What a cancelled transaction means when no condition of ours explains it. */
final class Transactions {
    private Transactions() {
    }

    static LifelineException failure(String what, TransactionCanceledException e) {
        for (CancellationReason reason : e.cancellationReasons()) {
            if ("ThrottlingError".equals(reason.code()) || "ProvisionedThroughputExceeded".equals(reason.code())) {
                return StoreFailures.throttled(what, e);
            }
        }
        // TransactionConflict: another transaction on the same items; the caller may simply retry.
        return new LifelineException(LifelineException.Kind.UNAVAILABLE, "CONTENDED",
                "Another change to the same items was in progress; " + what + " was not written. Retry.", null, e);
    }

    static boolean failedCondition(CancellationReason reason) {
        return "ConditionalCheckFailed".equals(reason.code());
    }
}
