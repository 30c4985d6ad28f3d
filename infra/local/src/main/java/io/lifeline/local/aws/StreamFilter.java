package io.lifeline.local.aws;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.support.Json;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.event.ruler.Machine;

/**
 * What Lambda's event filtering does for a DynamoDB event source mapping ({@code FilterCriteria} in template.yaml),
 * for Local: each record, in the JSON shape Lambda matches against ({@code eventName}, {@code dynamodb.Keys},
 * {@code NewImage}, {@code OldImage} as DynamoDB JSON), is matched by event-ruler against the function's patterns;
 * the patterns are ORed, and a mapping without any passes every record. A record no pattern matches is dropped
 * for that function, as Lambda discards it.
 */
final class StreamFilter {
    private final Machine machine;

    private StreamFilter(Machine machine) {
        this.machine = machine;
    }

    /** The filter of a mapping's patterns (none: every record passes). */
    static StreamFilter of(List<String> patterns) {
        if (patterns.isEmpty()) {
            return new StreamFilter(null);
        }
        Machine machine = Machine.builder().build();
        try {
            for (int i = 0; i < patterns.size(); i++) {
                machine.addRule("filter-" + i, patterns.get(i));
            }
        } catch (Exception e) {
            throw new IllegalStateException("template.yaml: a FilterCriteria pattern is not valid: " + e.getMessage(), e);
        }
        return new StreamFilter(machine);
    }

    boolean passes(Record record) {
        if (machine == null) {
            return true;
        }
        try {
            // The record's tree as is: no JSON text written only to be parsed again (the pump matches every record).
            return !machine.rulesForJSONEvent(toJson(record)).isEmpty();
        } catch (Exception e) {
            throw new IllegalStateException("cannot match a stream record against FilterCriteria", e);
        }
    }

    static ObjectNode toJson(Record record) {
        ObjectNode out = Json.object();
        if (record.eventNameAsString() != null) {
            out.put("eventName", record.eventNameAsString());
        }
        ObjectNode d = out.putObject("dynamodb");
        var sr = record.dynamodb();
        putImage(d, "Keys", sr.keys());
        putImage(d, "NewImage", sr.newImage());
        putImage(d, "OldImage", sr.oldImage());
        return out;
    }

    private static void putImage(ObjectNode parent, String name, Map<String, AttributeValue> image) {
        if (image == null || image.isEmpty()) {
            return;
        }
        ObjectNode node = parent.putObject(name);
        image.forEach((k, v) -> node.set(k, value(v)));
    }

    private static ObjectNode value(AttributeValue v) {
        ObjectNode out = Json.object();
        if (v.s() != null) {
            out.put("S", v.s());
        } else if (v.n() != null) {
            out.put("N", v.n());
        } else if (v.bool() != null) {
            out.put("BOOL", v.bool());
        } else if (Boolean.TRUE.equals(v.nul())) {
            out.put("NULL", true);
        } else if (v.b() != null) {
            out.put("B", Base64.getEncoder().encodeToString(v.b().asByteArray()));
        } else if (v.hasSs()) {
            ArrayNode a = out.putArray("SS");
            v.ss().forEach(a::add);
        } else if (v.hasNs()) {
            ArrayNode a = out.putArray("NS");
            v.ns().forEach(a::add);
        } else if (v.hasBs()) {
            ArrayNode a = out.putArray("BS");
            v.bs().stream().map(SdkBytes::asByteArray).forEach(b -> a.add(Base64.getEncoder().encodeToString(b)));
        } else if (v.hasL()) {
            ArrayNode a = out.putArray("L");
            v.l().forEach(e -> a.add(value(e)));
        } else if (v.hasM()) {
            ObjectNode m = out.putObject("M");
            v.m().forEach((k, e) -> m.set(k, value(e)));
        }
        return out;
    }
}
