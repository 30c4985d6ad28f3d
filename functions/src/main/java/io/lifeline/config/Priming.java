package io.lifeline.config;

import io.lifeline.support.Json;
import io.lifeline.support.Log;
import java.util.Map;
import org.crac.Context;
import org.crac.Core;
import org.crac.Resource;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * SnapStart priming: before Lambda takes the snapshot of an initialised function (CRaC's beforeCheckpoint),
 * make one cheap call through the DynamoDB client and one JSON round trip, so the snapshot holds loaded
 * SDK classes, a resolved endpoint and a warm JSON mapper, and the first request after a restore does not
 * pay for them. The call is an eventually consistent GetItem of a key that never exists: half a read unit,
 * once per published version. Every function's policy allows it (template.yaml; Lifeline Local enforces the
 * policies, so a test fails when one does not).
 *
 * <p>Priming is best effort: Lambda turns an exception out of {@code beforeCheckpoint} into an init error
 * ({@code BeforeCheckpointError}) and the version never gets a snapshot, so the stack cannot deploy. A failed
 * call (a denied action, the store out of reach at deploy time) is logged and the snapshot is taken anyway;
 * it still holds the loaded SDK classes, only less warmed.
 */
public final class Priming implements Resource {
    static final Map<String, AttributeValue> NO_SUCH_ITEM = Map.of(
            "pk", AttributeValue.fromS("PRIMING"), "sk", AttributeValue.fromS("PRIMING"));

    private final Wiring wiring;

    public Priming(Wiring wiring) {
        this.wiring = wiring;
    }

    /** Registers priming for a Lambda's wiring; the resource is returned so the caller keeps it reachable. */
    static Priming register(Wiring wiring) {
        Priming priming = new Priming(wiring);
        Core.getGlobalContext().register(priming);
        return priming;
    }

    @Override
    public void beforeCheckpoint(Context<? extends Resource> context) {
        prime();
    }

    @Override
    public void afterRestore(Context<? extends Resource> context) {
        // Nothing to redo: clients re-resolve credentials and connections on their own after a restore.
    }

    /** The priming itself, callable without CRaC (tests). Answers whether the priming call succeeded. */
    public boolean prime() {
        Json.write(Json.object().put("success", true).put("heartbeatTs", "2026-01-01T00:00:00Z"));
        try {
            wiring.dynamo().getItem(g -> g.tableName(wiring.config().tables().ledger()).key(NO_SUCH_ITEM));
            return true;
        } catch (RuntimeException e) {
            Log.emit(Log.line("WARN", "priming call failed; the snapshot is taken without it")
                    .put("error", e.toString()));
            return false;
        }
    }
}
