package io.lifeline.aws;

import io.lifeline.app.ReviveStarts;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sfn.SfnClient;
import software.amazon.awssdk.services.sfn.model.ExecutionAlreadyExistsException;

/**
 * {@link ReviveStarts} on Step Functions: {@code StartExecution} of the revive state machine. The client is built on
 * first use ({@code Wiring}'s memoized supplier), so a function that never starts a revive never builds it.
 */
public final class StepFunctionsReviveStarts implements ReviveStarts {
    private final Supplier<SfnClient> stepFunctions;
    private final String stateMachineArn;

    public StepFunctionsReviveStarts(Supplier<SfnClient> stepFunctions, String stateMachineArn) {
        this.stepFunctions = stepFunctions;
        this.stateMachineArn = stateMachineArn;
    }

    @Override
    public String start(String name, String input) {
        try {
            return stepFunctions.get().startExecution(r -> r.stateMachineArn(stateMachineArn).name(name).input(input))
                    .executionArn();
        } catch (ExecutionAlreadyExistsException e) {
            throw new AlreadyStarted(e);
        } catch (SdkException e) {
            throw new Unavailable(e);
        }
    }
}
