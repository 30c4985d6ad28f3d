package io.lifeline.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.auth.Scope;
import io.lifeline.store.team.KeyStore;
import io.lifeline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a junk key costs the heartbeat URL's function: a malformed one no read at all; a well-formed unknown one a
 * read each, up to {@link KeyCache#MAX_UNKNOWN_PER_SOURCE} per period from one source address, then none from that
 * source (a busy answer the clients retry), while other sources keep their own budget and every key known before
 * keeps working from any source, refreshed when its period ends, or served stale for one more period when the
 * refresh fails; and the tables a flood fills stay bounded.
 */
@Tag("unit")
class KeyCacheTest {
    static final String FLOODER = "203.0.113.9";
    static final String OTHER = "198.51.100.7";
    final MutableClock clock = new MutableClock(Instant.parse("2026-11-27T10:00:00Z"));
    final List<String> looked = new ArrayList<>();
    final String good = ApiKeys.generate();
    final AtomicBoolean revoked = new AtomicBoolean();
    final AtomicBoolean storeDown = new AtomicBoolean();
    final KeyCache cache = new KeyCache(k -> {
        looked.add(k);
        if (storeDown.get()) {
            throw new LifelineException(LifelineException.Kind.UNAVAILABLE, "STORE_UNAVAILABLE", "down");
        }
        return k.equals(good) && !revoked.get() ? Optional.of(new KeyStore.KeyInfo("t", Scope.AGENT, "id"))
                : Optional.empty();
    }, clock, Duration.ofSeconds(300));

    @Test
    void malformedKeys_areUnknownWithoutARead() {
        for (String junk : List.of("", "not-a-key", "ll_", "ll_short", "ll_" + "x".repeat(44), "xx_" + "a".repeat(43),
                "ll_" + "a".repeat(42) + "=", "Bearer " + good)) {
            assertFalse(cache.find(junk, FLOODER).isPresent(), junk);
        }
        assertEquals(List.of(), looked);
        assertTrue(ApiKeys.wellFormed(good));
    }

    @Test
    void unknownKeys_costBoundedReadsPerSource_otherSourcesKeepTheirBudget_andKnownKeysKeepWorking() {
        assertTrue(cache.find(good, FLOODER).isPresent());
        for (int i = 0; i < KeyCache.MAX_UNKNOWN_PER_SOURCE; i++) {
            assertFalse(cache.find(junk(i), FLOODER).isPresent());
        }
        int reads = looked.size();
        assertEquals(KeyCache.MAX_UNKNOWN_PER_SOURCE + 1, reads);
        LifelineException busy = assertThrows(LifelineException.class, () -> cache.find(junk(-1), FLOODER));
        assertEquals(LifelineException.Kind.THROTTLED, busy.kind());
        assertEquals(reads, looked.size(), "no read past the source's budget");
        assertTrue(cache.find(good, FLOODER).isPresent(), "a known key still works from the flooding source");
        assertFalse(cache.find(junk(0), FLOODER).isPresent(), "a cached unknown key is still unknown, with no read");
        assertFalse(cache.find(junk(-1), OTHER).isPresent(), "another source has its own budget");
        assertEquals(reads + 1, looked.size());
        clock.advance(Duration.ofSeconds(301));
        assertFalse(cache.find(junk(-2), FLOODER).isPresent(), "a new period reads again");
    }

    @Test
    void aKnownKeyWhosePeriodEnded_isRefreshed_evenFromASourcePastItsBudget() {
        assertTrue(cache.find(good, FLOODER).isPresent());
        clock.advance(Duration.ofSeconds(200));
        for (int i = 0; i < KeyCache.MAX_UNKNOWN_PER_SOURCE; i++) {
            cache.find(junk(i), FLOODER); // the source's window runs from here to 500 s
        }
        assertThrows(LifelineException.class, () -> cache.find(junk(-1), FLOODER));
        clock.advance(Duration.ofSeconds(101)); // 301 s: the good key's answer expired, the source is still spent
        int reads = looked.size();
        assertTrue(cache.find(good, FLOODER).isPresent(), "refreshed, not refused");
        assertEquals(reads + 1, looked.size(), "one read: the refresh");
        revoked.set(true);
        clock.advance(Duration.ofSeconds(300));
        assertFalse(cache.find(good, FLOODER).isPresent(), "a revoked key stops at its next refresh");
    }

    @Test
    void aKnownKeyWhoseRefreshFails_isServedStaleForOnePeriod_thenRefused() {
        assertTrue(cache.find(good, OTHER).isPresent());
        storeDown.set(true);
        LifelineException never = assertThrows(LifelineException.class, () -> cache.find(junk(1), OTHER));
        assertEquals("STORE_UNAVAILABLE", never.code(), "a key never seen has no answer to serve");
        clock.advance(Duration.ofSeconds(300));
        assertTrue(cache.find(good, OTHER).isPresent(), "stale, at the period's end");
        clock.advance(Duration.ofSeconds(299));
        assertTrue(cache.find(good, OTHER).isPresent(), "stale, one period on");
        clock.advance(Duration.ofSeconds(1));
        assertEquals("STORE_UNAVAILABLE", assertThrows(LifelineException.class, () -> cache.find(good, OTHER)).code(),
                "no older than one more period");
        storeDown.set(false);
        assertTrue(cache.find(good, OTHER).isPresent(), "the store back: read and cached again");
    }

    @Test
    void aFloodFromManySources_leavesTheTablesBounded_andTheKnownKeyInPlace() {
        assertTrue(cache.find(good, OTHER).isPresent());
        int flood = KeyCache.MAX_SOURCES + 500;
        for (int i = 0; i < flood; i++) {
            assertFalse(cache.find(junk(i), "10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255)).isPresent());
        }
        assertEquals(KeyCache.MAX_SOURCES, cache.sourcesHeld());
        assertArrayEquals(new int[] {1, KeyCache.MAX_UNKNOWN}, cache.keysHeld());
        int reads = looked.size();
        assertTrue(cache.find(good, OTHER).isPresent());
        assertEquals(reads, looked.size(), "the known key is still cached: no junk pushed it out");
    }

    @Test
    void sourceKey_groupsAnIpv6HostByItsSlash64_andResolvesNothing() {
        assertEquals(KeyCache.sourceKey("2001:db8:1:2:aaaa::1"), KeyCache.sourceKey("2001:db8:1:2:bbbb:cccc:dddd:2"));
        assertEquals("v6:20010db800010002/64", KeyCache.sourceKey("2001:db8:1:2::9"));
        assertNotEquals(KeyCache.sourceKey("2001:db8:1:2::1"), KeyCache.sourceKey("2001:db8:1:3::1"));
        assertEquals("10.0.0.1", KeyCache.sourceKey("::ffff:10.0.0.1"));
        assertEquals("192.0.2.1", KeyCache.sourceKey("192.0.2.1"));
        assertEquals("-", KeyCache.sourceKey(null));
        assertEquals("-", KeyCache.sourceKey(" "));
        assertEquals("localhost", KeyCache.sourceKey("localhost"), "a name is a label, never looked up");
        assertEquals("abc:xyz", KeyCache.sourceKey("abc:xyz"));
        assertEquals(64, KeyCache.sourceKey("x".repeat(100)).length());
    }

    static String junk(int i) {
        String n = Integer.toString(Math.abs(i) + (i < 0 ? 900_000 : 0));
        return "ll_" + "A".repeat(43 - n.length()) + n;
    }
}
