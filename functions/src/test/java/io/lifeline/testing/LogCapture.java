package io.lifeline.testing;

import io.lifeline.support.Log;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Captures every line {@link Log} writes during each test (register it with {@code @RegisterExtension} on an instance
 * field), and gives stdout back after the test.
 */
public final class LogCapture implements BeforeEachCallback, AfterEachCallback {
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());

    /** The lines written so far in this test, in order (a synchronized list: copy it before iterating). */
    public List<String> lines() {
        return lines;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Log.sink(lines::add);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Log.sink(null);
    }
}
