package io.lifeline.client.heartbeatmd;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

final class Fixtures {
    private Fixtures() {
    }

    /** A heartbeat.md example from src/test/resources/heartbeatmd/. */
    static String seed(String name) {
        try (InputStream in = Fixtures.class.getResourceAsStream("/heartbeatmd/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
