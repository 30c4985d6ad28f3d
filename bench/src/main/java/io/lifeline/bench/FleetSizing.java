package io.lifeline.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One fleet size sizes every cap on the heartbeat path: template.yaml's {@code FleetCaps} mapping is this class's
 * {@link #table()}, and {@code FleetSizingTest} holds the two equal (CloudFormation cannot multiply, so the template
 * carries the figures and this code derives them).
 *
 * <p>The rule every cap follows: a function serves at most {@link #RPS_PER_CONCURRENCY} requests a second per unit of
 * concurrency (Lambda: "Each instance of your execution environment can serve up to 10 requests per second",
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), and at most concurrency / duration; so
 * each function gets the larger of rps / 10 and rps x duration, where rps is the class's mean rate times
 * {@link Inputs#headroom()}: at the mean alone a fleet that bunches its beats is refused.
 *
 * <p>A class is a number of agents beating alone (one key and one request each) every {@link #CLASS_BEAT_SECONDS}
 * seconds. An agent behind a host lease or a daemon's batch of N counts 1/N, and a shorter interval counts more
 * ({@link #equivalentAgents}); {@link #classFor} picks the smallest class that covers a fleet.
 */
public final class FleetSizing {
    /** Lambda's synchronous invocations a second per unit of concurrency (per function). */
    public static final double RPS_PER_CONCURRENCY = 10;
    /** The beat interval the classes are sized at: HeartbeatIntervalSeconds' default. */
    public static final double CLASS_BEAT_SECONDS = 30;
    /** The FleetSize parameter's allowed values, smallest first. */
    public static final List<Integer> CLASSES = List.of(1_000, 10_000, 100_000, 1_000_000);

    /**
     * What the derivation assumes: {@code headroom} over the mean rate; the billed durations of a heartbeat request
     * and an authorizer run on AWS (the handler's measured 3.47 ms in-process, BENCHMARKS.md section 3, plus a
     * DynamoDB round trip; an upper bound); the authorizer's cache ({@code ReauthorizeEvery}); the write units a
     * stream shard takes (a partition's 1,000 a second) and the publisher's batches per shard (its mapping's
     * {@code ParallelizationFactor}); floors under which no cap goes.
     */
    public record Inputs(double headroom, double heartbeatMillis, double authorizerMillis, double keyCacheSeconds,
                         double writesPerShard, int batchesPerShard, int publisherFloor, double burstOverRate) {
        public static Inputs defaults() {
            return new Inputs(2, 20, 10, 300, 1_000, 4, 10, 2);
        }
    }

    /**
     * The caps a deployment sets on the heartbeat path: the stage's throttle on each heartbeat route (rate and
     * burst) and the reserved concurrency of the API's heartbeat function, the heartbeat URL's function, the authorizer
     * and the outbox publisher.
     */
    public record Caps(int heartbeatRouteRate, int heartbeatRouteBurst, int heartbeat, int heartbeatUrl,
                       int authorizer, int publisher) {
        /** The figures template.yaml set before FleetSize (its defaults until 2026-11-28), for comparison. */
        public static final Caps BEFORE_FLEET_SIZE = new Caps(1_000, 2_000, 200, 50, 100, 10);

        /** The template's names for them: the keys of each FleetCaps row, in this order. */
        static final List<String> KEYS = List.of("HeartbeatRouteRate", "HeartbeatRouteBurst", "Heartbeat",
                "HeartbeatUrl", "Authorizer", "Publisher");

        List<Integer> values() {
            return List.of(heartbeatRouteRate, heartbeatRouteBurst, heartbeat, heartbeatUrl, authorizer, publisher);
        }

        /** Reserved concurrency the four functions take from the account. */
        public int reserved() {
            return heartbeat + heartbeatUrl + authorizer + publisher;
        }
    }

    private FleetSizing() {
    }

    /** Requests a second of {@code agents} single agents beating every {@link #CLASS_BEAT_SECONDS}. */
    public static double meanRps(int agents) {
        return agents / CLASS_BEAT_SECONDS;
    }

    /** The larger of rps / 10 and rps x duration, rounded up: the concurrency that serves {@code rps}. */
    public static int concurrency(double rps, double millis) {
        return (int) Math.ceil(Math.max(rps / RPS_PER_CONCURRENCY, rps * millis / 1000.0) - 1e-9);
    }

    /** The caps for the class of {@code agents}. */
    public static Caps caps(int agents, Inputs in) {
        double rps = meanRps(agents) * in.headroom();
        int rate = (int) Math.ceil(rps - 1e-9);
        // The authorizer: each key once per cache period when warm; after an outage longer than the cache, every key
        // within one interval. Sized for that reconnect (every key in an interval), which is the mean beat rate.
        double keys = meanRps(agents);
        int shards = (int) Math.ceil(rps / in.writesPerShard() - 1e-9);
        return new Caps(rate, (int) Math.ceil(rate * in.burstOverRate()), concurrency(rps, in.heartbeatMillis()),
                concurrency(rps, in.heartbeatMillis()), concurrency(keys, in.authorizerMillis()),
                Math.max(in.publisherFloor(), shards * in.batchesPerShard()));
    }

    /** Every class's caps, by class. */
    public static Map<Integer, Caps> table(Inputs in) {
        Map<Integer, Caps> out = new LinkedHashMap<>();
        CLASSES.forEach(c -> out.put(c, caps(c, in)));
        return out;
    }

    /**
     * Agents beating alone every 30 s that send the same requests (and hold the same keys) as {@code agents} beating
     * every {@code beatSeconds}, a share {@code hostedShare} of them behind host leases (or batches) of
     * {@code perHost}.
     */
    public static double equivalentAgents(double agents, double beatSeconds, double hostedShare, int perHost) {
        return agents * ((1 - hostedShare) + hostedShare / perHost) * CLASS_BEAT_SECONDS / beatSeconds;
    }

    /** The smallest class that covers a fleet of {@code equivalentAgents}; refused past the largest. */
    public static int classFor(double equivalentAgents) {
        for (int c : CLASSES) {
            if (equivalentAgents <= c) {
                return c;
            }
        }
        throw new IllegalArgumentException(String.format(Locale.ROOT, "%,.0f agents (30 s, alone) is past the "
                + "largest FleetSize, %,d: docs/scale.md, \"What changes at 10,000,000\"", equivalentAgents,
                CLASSES.get(CLASSES.size() - 1)));
    }

    /** The caps template.yaml's FleetCaps mapping gives {@code fleetSize} (its key: the parameter's value). */
    public static Caps fromTemplate(JsonNode template, int fleetSize) {
        JsonNode row = template.path("Mappings").path("FleetCaps").path(String.valueOf(fleetSize));
        if (row.isMissingNode()) {
            throw new IllegalArgumentException("template.yaml's FleetCaps has no row " + fleetSize);
        }
        List<Integer> v = new ArrayList<>();
        for (String key : Caps.KEYS) {
            if (!row.has(key)) {
                throw new IllegalArgumentException("FleetCaps." + fleetSize + " has no " + key);
            }
            v.add(row.get(key).asInt());
        }
        return new Caps(v.get(0), v.get(1), v.get(2), v.get(3), v.get(4), v.get(5));
    }
}
