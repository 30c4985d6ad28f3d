package io.lifeline.local;

import static io.lifeline.local.TestStack.ok;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.local.asl.Execution;
import io.lifeline.store.RevivalStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RevivalStore#pending()}, the store's answer to "which revive flows are agents still waiting on", which
 * Lifeline Local asks on start to resume the flows a crash ended (it used to hand-write the Scan). Real revive flows
 * over DynamoDB Local; time moves by the test clock only.
 */
class RevivalStoreTest {

    private static RevivalStore revivals(TestStack s) {
        return new RevivalStore(s.dynamo, s.tables, Duration.ofDays(30));
    }

    @Test
    void pending_agentsLeftRestarting_listsEachWithTheExecutionThatClaimedItsRevive() throws Exception {
        try (TestStack s = TestStack.start()) {
            Execution first = s.restartingAfterACrash("r1");
            Execution second = s.restartingAfterACrash("r2");
            ok(s.ready("fine"));

            List<RevivalStore.Pending> pending = revivals(s).pending().stream()
                    .sorted(java.util.Comparator.comparing(RevivalStore.Pending::agentId)).toList();

            assertEquals(List.of("r1", "r2"), pending.stream().map(RevivalStore.Pending::agentId).toList());
            for (int i = 0; i < 2; i++) {
                RevivalStore.Pending p = pending.get(i);
                Execution flow = i == 0 ? first : second;
                assertEquals(TestStack.TEAM, p.team());
                assertEquals("host-1", p.hostId());
                assertEquals(flow.input().get("startSeq").asLong(), p.startSeq(), flow::toString);
                assertEquals(flow.name(), p.executionId().substring(p.executionId().lastIndexOf(':') + 1));
            }
        }
    }

    @Test
    void pending_agentThatLeftRestarting_isNoLongerListed() throws Exception {
        try (TestStack s = TestStack.start()) {
            s.restartingAfterACrash("back");
            assertEquals(1, revivals(s).pending().size());

            ok(s.agent("join", "back", null));

            assertEquals("ready", s.status("back"));
            assertEquals(List.of(), revivals(s).pending());
        }
    }

    @Test
    void pending_noAgentRestarting_isEmpty() throws Exception {
        try (TestStack s = TestStack.start()) {
            ok(s.ready("a"));
            ok(s.agent("fail", "a", "{\"reason\":\"oom\"}"));
            assertEquals("dead", s.status("a"), "its flow has not started: the outbox has not run");

            assertEquals(List.of(), revivals(s).pending());
        }
    }
}
