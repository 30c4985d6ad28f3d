package io.lifeline.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.store.KeyStore;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a junk key costs the heartbeat URL's function: a malformed one no read at all, a well-formed unknown one a
 * read each up to {@link KeyCache#MAX_UNKNOWN_PER_PERIOD} per period, then none (a busy answer the SDK retries)
 * while every key already known keeps working.
 */
@Tag("unit")
class KeyCacheTest {
    final MutableClock clock = new MutableClock(Instant.parse("2026-11-27T10:00:00Z"));
    final List<String> looked = new ArrayList<>();
    final String good = ApiKeys.generate();
    final KeyCache cache = new KeyCache(k -> {
        looked.add(k);
        return k.equals(good) ? Optional.of(new KeyStore.KeyInfo("t", Scope.AGENT, "id")) : Optional.empty();
    }, clock, Duration.ofSeconds(300));

    @Test
    void malformedKeys_areUnknownWithoutARead() {
        for (String junk : List.of("", "not-a-key", "ll_", "ll_short", "ll_" + "x".repeat(44), "xx_" + "a".repeat(43),
                "ll_" + "a".repeat(42) + "=", "Bearer " + good)) {
            assertFalse(cache.find(junk).isPresent(), junk);
        }
        assertEquals(List.of(), looked);
        assertTrue(ApiKeys.wellFormed(good));
    }

    @Test
    void unknownKeys_costBoundedReadsPerPeriod_andKnownKeysKeepWorking() {
        assertTrue(cache.find(good).isPresent());
        for (int i = 0; i < KeyCache.MAX_UNKNOWN_PER_PERIOD; i++) {
            assertFalse(cache.find(junk(i)).isPresent());
        }
        int reads = looked.size();
        assertEquals(KeyCache.MAX_UNKNOWN_PER_PERIOD + 1, reads);
        LifelineException busy = assertThrows(LifelineException.class, () -> cache.find(junk(-1)));
        assertEquals(LifelineException.Kind.THROTTLED, busy.kind());
        assertTrue(cache.find(good).isPresent(), "a cached good key still works");
        assertFalse(cache.find(junk(0)).isPresent(), "a cached unknown key is still unknown, with no read");
        assertEquals(reads, looked.size(), "no read past the cap");
        clock.advance(Duration.ofSeconds(301));
        assertFalse(cache.find(junk(-1)).isPresent(), "a new period reads again");
        assertEquals(reads + 1, looked.size());
    }

    static String junk(int i) {
        String n = Integer.toString(Math.abs(i) + (i < 0 ? 900_000 : 0));
        return "ll_" + "A".repeat(43 - n.length()) + n;
    }
}
