package io.lifeline.local.stack;

import static io.lifeline.local.stack.TestStack.ok;

import io.lifeline.local.aws.asl.Execution;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The revive flow's tests' fixture, on a static {@code @RegisterExtension} field: one stack for the test class and its
 * {@code @Nested} classes (built before its {@code @BeforeAll} methods, closed after the class), whose store calls a test can fail through
 * {@link #faults} (cleared after each test), and an agent on host-1 put into its revive flow.
 */
public final class ReviveFixture implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
    public final StoreFaults faults = new StoreFaults();
    private TestStack stack;
    /** The test class and its open {@code @Nested} classes, which JUnit hands this extension too: one stack for all. */
    private int depth;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (depth++ == 0) {
            stack = TestStack.builder().interceptor(faults).build();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        faults.clear();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (--depth == 0) {
            stack.close();
        }
    }

    public TestStack stack() {
        return stack;
    }

    /** A new agent (its id from {@code what}) registered on host-1 and joined: ready. */
    public String readyOnHost(String what) {
        String id = TestStack.newId(what);
        ok(stack.register(id));
        ok(stack.agent("join", id, null));
        return id;
    }

    /** The agent reports a failure (ready -> dead), the outbox runs: the death starts its one revive execution. */
    public Execution kill(String id) {
        return stack.dies(id);
    }
}
