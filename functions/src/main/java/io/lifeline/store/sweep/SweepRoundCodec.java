package io.lifeline.store.sweep;

import static io.lifeline.store.dynamo.Items.n;

import io.lifeline.agent.SweepCensus;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A part's census counters as an attribute: team -> {@code {a: alive, w: watched, s: stale, l: {lease: [watched,
 * stale]}, src: {source: [watched, stale]}}}. Grows with teams, leases and source addresses, not agents.
 */
final class SweepRoundCodec {
    private SweepRoundCodec() {
    }

    /** One team's counters as an attribute. */
    static AttributeValue team(SweepCensus.Counts c) {
        return AttributeValue.fromM(Map.of("a", n(c.alive()), "w", n(c.watched()), "s", n(c.stale()),
                "l", pairs(c.byLease()), "src", pairs(c.bySource())));
    }

    static Map<String, SweepCensus.Counts> counts(AttributeValue v) {
        Map<String, SweepCensus.Counts> out = new TreeMap<>();
        v.m().forEach((team, c) -> out.put(team, new SweepCensus.Counts(num(c.m().get("a")), num(c.m().get("w")),
                num(c.m().get("s")), pairs(c.m().get("l")), pairs(c.m().get("src")))));
        return out;
    }

    private static AttributeValue pairs(Map<String, int[]> pairs) {
        Map<String, AttributeValue> out = new HashMap<>();
        pairs.forEach((k, p) -> out.put(k, AttributeValue.fromL(List.of(n(p[0]), n(p[1])))));
        return AttributeValue.fromM(out);
    }

    private static Map<String, int[]> pairs(AttributeValue v) {
        Map<String, int[]> out = new HashMap<>();
        v.m().forEach((k, p) -> out.put(k, new int[] {num(p.l().get(0)), num(p.l().get(1))}));
        return out;
    }

    private static int num(AttributeValue v) {
        return Integer.parseInt(v.n());
    }
}
