package io.lifeline.local.contract.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.config.Config;
import io.lifeline.config.Priming;
import io.lifeline.config.Wiring;
import io.lifeline.local.stack.TestStack;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;

/** SnapStart priming makes one read through the DynamoDB client and writes nothing. */
@Tag("contract")
class PrimingTest {
    @Test
    void prime_makesOneGetItemAndNoWrite() throws Exception {
        List<String> operations = new CopyOnWriteArrayList<>();
        ExecutionInterceptor count = new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                operations.add(attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME));
            }
        };
        try (TestStack stack = TestStack.builder().interceptor(count).build()) {
            int before = stack.allItems().size();
            operations.clear();
            new Priming(new Wiring(Config.fromEnvironment(Map.of("LIVE_TABLE", stack.tables.live(),
                    "LEDGER_TABLE", stack.tables.ledger())), Clock.systemUTC(),
                    stack.dynamo)).prime();
            assertEquals(List.of("GetItem"), List.copyOf(operations));
            assertEquals(before, stack.allItems().size(), "priming wrote nothing");
        }
    }
}
