package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.store.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the HTTP API's authorizer says of a key, for a function that answers requests no authorizer has seen (the
 * heartbeat function's Function URL): each distinct key is looked up once (one GetItem by its hash, as the
 * authorizer does) and its answer, known or unknown, is kept in the execution environment for {@link #ttl}, which
 * template.yaml sets to the authorizer's {@code ReauthorizeEvery}. So a revoked key stops working through the URL
 * within the same bound as through the API, and a wrong key costs at most one GetItem per cache period.
 *
 * <p>Held by the key's SHA-256, never the key. At most {@link #MAX_ENTRIES} keys are kept (least recently used
 * go first), so a flood of distinct wrong keys cannot grow the environment's memory; each of those costs its one
 * GetItem, bounded by the function's reserved concurrency. A store failure is not cached: the request is answered
 * 503 and the next one asks again, so a throttled moment never locks a good key out for the period.
 */
public final class KeyCache {
    /** Keys remembered at most: about 2 MB of hashes and answers. */
    public static final int MAX_ENTRIES = 10_000;
    /**
     * Look-ups that found no key, at most, per cache period and execution environment. Past it, a key this
     * environment has not cached is answered "busy" (503 THROTTLED, Retry-After; the SDK retries it) without a read
     * until the period ends, while every key already known keeps working: a flood of distinct well-formed junk
     * keys costs at most this many GetItems per environment and period (with the URL function's cap of 50
     * environments and a 300 s period, 50,000 eventually consistent reads, $0.003, per 5 minutes at most).
     */
    public static final int MAX_UNKNOWN_PER_PERIOD = 1_000;

    private record Entry(Optional<KeyStore.KeyInfo> info, Instant expires) {
    }

    private final Function<String, Optional<KeyStore.KeyInfo>> lookup;
    private final Clock clock;
    private final Duration ttl;
    private final Map<String, Entry> entries = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
            return size() > MAX_ENTRIES;
        }
    };
    /** GetItems made, for the function's summary metric ({@code KeyLookups}). */
    private long lookups;
    /** Look-ups that found nothing in the current window, and when the window ends. */
    private int unknownInWindow;
    private Instant windowEnds = Instant.MIN;

    /** {@code lookup} finds a key by its plain text (it hashes it itself): {@link KeyStore#find}. */
    public KeyCache(Function<String, Optional<KeyStore.KeyInfo>> lookup, Clock clock, Duration ttl) {
        if (ttl.isNegative()) {
            throw new IllegalArgumentException("a cache period is never negative: " + ttl);
        }
        this.lookup = lookup;
        this.clock = clock;
        this.ttl = ttl;
    }

    public Duration ttl() {
        return ttl;
    }

    /**
     * The key's team, scope and id, or empty when no such key exists (now, or when last looked up) or the key is
     * malformed (no read at all). Throws 503 THROTTLED past {@link #MAX_UNKNOWN_PER_PERIOD} unknown keys in a period.
     */
    public Optional<KeyStore.KeyInfo> find(String key) {
        if (!ApiKeys.wellFormed(key)) {
            return Optional.empty();
        }
        String hash = ApiKeys.hash(key);
        Instant now = clock.instant();
        synchronized (entries) {
            Entry cached = entries.get(hash);
            if (cached != null && now.isBefore(cached.expires())) {
                return cached.info();
            }
            if (!now.isBefore(windowEnds)) {
                windowEnds = now.plus(ttl.isZero() ? Duration.ofMinutes(5) : ttl);
                unknownInWindow = 0;
            }
            if (unknownInWindow >= MAX_UNKNOWN_PER_PERIOD) {
                throw new LifelineException(LifelineException.Kind.THROTTLED,
                        "THROTTLED", "Too many unknown keys here lately; retry");
            }
        }
        // Outside the lock: Lifeline Local runs one environment for many threads; in Lambda there is one request
        // at a time per environment, so two look-ups of one key can only race on Local.
        Optional<KeyStore.KeyInfo> info = lookup.apply(key);
        synchronized (entries) {
            lookups++;
            if (info.isEmpty()) {
                unknownInWindow++;
            }
            if (!ttl.isZero()) {
                entries.put(hash, new Entry(info, now.plus(ttl)));
            }
        }
        return info;
    }

    /** GetItems made since the last call (and resets the count). */
    public long drainLookups() {
        synchronized (entries) {
            long n = lookups;
            lookups = 0;
            return n;
        }
    }
}
