package io.lifeline.api;

import io.lifeline.agent.LifelineException;
import io.lifeline.auth.ApiKeys;
import io.lifeline.store.team.KeyStore;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the HTTP API's authorizer says of a key, for a function that answers requests no authorizer has seen (the
 * heartbeat function's Function URL): each distinct key is looked up once (one GetItem by its hash, as the
 * authorizer does) and its answer, known or unknown, is kept in the execution environment for {@link #ttl}, which
 * template.yaml sets to the authorizer's {@code ReauthorizeEvery}. So a revoked key stops working through the URL
 * within the same bound as through the API.
 *
 * <p><b>A flood costs the flooder.</b> Keys found (known) and keys not found (unknown) are kept apart, each at most
 * {@link #MAX_KNOWN} / {@link #MAX_UNKNOWN} (least recently used go first), so no flood of junk keys can push a
 * real key out. A known key whose period ended is looked up again whatever any budget says: a real agent's key
 * is never refused for others' junk. Look-ups that find nothing are charged to the request's source address (the
 * Function URL event's {@code requestContext.http.sourceIp}; an IPv6 address by its /64, what one host is
 * usually given): at most {@link #MAX_UNKNOWN_PER_SOURCE} per period and source. Past it, a key this environment
 * does not know, from that source, is answered "busy" (503 THROTTLED, Retry-After; the clients retry it) without a
 * read until the period ends; every other source, and every known key from that source, is served as before. The
 * per-source table holds at most {@link #MAX_SOURCES} sources (least recently seen go first): a source pushed out
 * starts a fresh budget, which is what a new address gets anyway. So what a flood of distinct well-formed junk
 * keys costs is one eventually consistent GetItem per request at most (half a read unit, $0.0625 a million, less
 * than the Lambda request it rides on, $0.20 a million), bounded by the URL function's reserved concurrency; from
 * one source, {@link #MAX_UNKNOWN_PER_SOURCE} per period and environment.
 *
 * <p>Held by the key's SHA-256, never the key. A store failure is not cached: a key never seen (or unknown) is
 * answered 503 and the next request asks again, so a throttled moment never locks a good key out for the period;
 * a known key whose refresh fails is served its last answer, stale, for at most one more period
 * ({@link #staleFor}), so a store hiccup at the moment of expiry does not refuse a real agent's beat either, and a
 * revoked key still stops working within two periods while the store fails (one while it answers).
 */
public final class KeyCache {
    /** Keys found, remembered at most: about 2 MB of hashes and answers. Junk never lands here. */
    public static final int MAX_KNOWN = 10_000;
    /** Keys not found, remembered at most (so a repeated wrong key costs one read a period, not one a request). */
    public static final int MAX_UNKNOWN = 10_000;
    /**
     * Look-ups that found no key, at most, per cache period, source address and execution environment. A host's
     * agents make none (their keys are found); a misconfigured one makes one per distinct wrong key and period.
     */
    public static final int MAX_UNKNOWN_PER_SOURCE = 100;
    /** Source addresses whose budget is remembered, at most: about 1 MB. */
    public static final int MAX_SOURCES = 10_000;

    private record Entry(Optional<KeyStore.KeyInfo> info, Instant expires) {
    }

    /** One source's unknown look-ups in its current window, and when that window ends. */
    private static final class Budget {
        int unknown;
        Instant windowEnds = Instant.MIN;
    }

    private final Function<String, Optional<KeyStore.KeyInfo>> lookup;
    private final Clock clock;
    private final Duration ttl;
    /** How long past its period a known key's answer may be served while its refresh fails: one more period. */
    private final Duration staleFor;
    private final Map<String, Entry> known = lru(MAX_KNOWN);
    private final Map<String, Entry> unknown = lru(MAX_UNKNOWN);
    private final Map<String, Budget> sources = lru(MAX_SOURCES);
    /** GetItems made, for the function's summary metric ({@code KeyLookups}). */
    private long lookups;

    /** {@code lookup} finds a key by its plain text (it hashes it itself): {@link KeyStore#find}. */
    public KeyCache(Function<String, Optional<KeyStore.KeyInfo>> lookup, Clock clock, Duration ttl) {
        if (ttl.isNegative()) {
            throw new IllegalArgumentException("a cache period is never negative: " + ttl);
        }
        this.lookup = lookup;
        this.clock = clock;
        this.ttl = ttl;
        this.staleFor = ttl;
    }

    private static <V> Map<String, V> lru(int max) {
        return new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
    }

    public Duration ttl() {
        return ttl;
    }

    /**
     * The key's team, scope and id, or empty when no such key exists (now, or when last looked up) or the key is
     * malformed (no read at all). {@code source} is the request's source address (null or blank: one shared
     * unknown source). Throws 503 THROTTLED for a key this environment does not know from a source past
     * {@link #MAX_UNKNOWN_PER_SOURCE} in its period, and the store's 503 when a look-up fails with no stale answer
     * to serve.
     */
    public Optional<KeyStore.KeyInfo> find(String key, String source) {
        if (!ApiKeys.wellFormed(key)) {
            return Optional.empty();
        }
        String hash = ApiKeys.hash(key);
        Instant now = clock.instant();
        Entry wasKnown;
        synchronized (this) {
            wasKnown = known.get(hash);
            if (wasKnown != null && now.isBefore(wasKnown.expires())) {
                return wasKnown.info();
            }
            Entry wasUnknown = unknown.get(hash);
            if (wasUnknown != null && now.isBefore(wasUnknown.expires())) {
                return Optional.empty();
            }
            if (wasKnown == null && budget(source, now).unknown >= MAX_UNKNOWN_PER_SOURCE) {
                throw new LifelineException(LifelineException.Kind.THROTTLED,
                        "THROTTLED", "Too many unknown keys from this address lately; retry");
            }
        }
        // Outside the lock: Lifeline Local runs one environment for many threads; in Lambda there is one request
        // at a time per environment, so two look-ups of one key can only race on Local.
        Optional<KeyStore.KeyInfo> info;
        try {
            info = lookup.apply(key);
        } catch (LifelineException e) {
            if (wasKnown != null && now.isBefore(wasKnown.expires().plus(staleFor))) {
                return wasKnown.info(); // the store failed at the moment of expiry: the last answer, for a while
            }
            throw e;
        }
        remember(hash, info, wasKnown != null, source, now);
        return info;
    }

    private synchronized void remember(String hash, Optional<KeyStore.KeyInfo> info, boolean wasKnown, String source,
                                       Instant now) {
        lookups++;
        if (info.isEmpty() && !wasKnown) {
            budget(source, now).unknown++;
        }
        if (ttl.isZero()) {
            return;
        }
        Entry entry = new Entry(info, now.plus(ttl));
        if (info.isPresent()) {
            unknown.remove(hash);
            known.put(hash, entry);
        } else {
            known.remove(hash);
            unknown.put(hash, entry);
        }
    }

    /** The source's budget, its window started afresh when the last one ended. Called under the lock. */
    private Budget budget(String source, Instant now) {
        Budget b = sources.computeIfAbsent(sourceKey(source), s -> new Budget());
        if (!now.isBefore(b.windowEnds)) {
            b.windowEnds = now.plus(ttl.isZero() ? Duration.ofMinutes(5) : ttl);
            b.unknown = 0;
        }
        return b;
    }

    /**
     * What a budget is charged to: an IPv4 address as it is, an IPv6 address by its /64 (the prefix one host or
     * one customer line is given, so a flooder cannot spread over its own addresses), anything else (absent,
     * not an address) as one shared source, cut to 64 characters.
     */
    static String sourceKey(String source) {
        if (source == null || source.isBlank()) {
            return "-";
        }
        if (source.indexOf(':') >= 0 && source.length() <= 45 && source.chars().allMatch(KeyCache::addressChar)) {
            try {
                // A literal: parsed, never resolved (getByName looks nothing up for an IP literal).
                byte[] bytes = InetAddress.getByName(source).getAddress();
                if (bytes.length == 16) {
                    return "v6:" + HexFormat.of().formatHex(bytes, 0, 8) + "/64";
                }
                return InetAddress.getByAddress(bytes).getHostAddress(); // an IPv4-mapped address: its IPv4
            } catch (UnknownHostException e) {
                return source;
            }
        }
        return source.length() <= 64 ? source : source.substring(0, 64);
    }

    private static boolean addressChar(int c) {
        return c == ':' || c == '.' || Character.digit(c, 16) >= 0;
    }

    /** Sources whose budget is held now (at most {@link #MAX_SOURCES}); for tests. */
    synchronized int sourcesHeld() {
        return sources.size();
    }

    /** Keys held now, found and not found (at most {@link #MAX_KNOWN} and {@link #MAX_UNKNOWN}); for tests. */
    synchronized int[] keysHeld() {
        return new int[] {known.size(), unknown.size()};
    }

    /** GetItems made since the last call (and resets the count). */
    public synchronized long drainLookups() {
        long n = lookups;
        lookups = 0;
        return n;
    }
}
