package io.lifeline.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lifeline.client.model.RegisterAgent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The extension with its defaults, as {@code @ExtendWith} gives it: the template's parameters, the fixed start. */
@Tag("e2e")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(LifelineLocalExtension.class)
class ExtendWithDefaultsTest {
    @Test
    void startsOnTheFixedClock_withTheTemplatesStaleAfter(LocalLifeline lifeline) {
        assertEquals(LifelineLocalExtension.DEFAULT_START, lifeline.clock().instant());
        assertEquals("local", lifeline.team());
        lifeline.client().register(RegisterAgent.of("defaults", "Defaults", "worker"));
        assertEquals(60L, lifeline.client().agent("defaults").staleAfterSeconds());
    }

    @Test
    void theClockMovesForwardOnly(LocalLifeline lifeline) {
        assertThrows(IllegalArgumentException.class, () -> lifeline.advance(Duration.ofSeconds(-1)));
    }
}
