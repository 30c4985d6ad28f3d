package io.lifeline.local.stack;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Every item of a stack's table at one moment, for tests that check a refused request wrote nothing. A
 * failure names only the items that were added, removed or changed, not the whole table.
 */
public final class StoreSnapshot {
    private final TestStack stack;
    private final Map<String, Map<String, AttributeValue>> items;

    private StoreSnapshot(TestStack stack) {
        this.stack = stack;
        this.items = byKey(stack.allItems());
    }

    public static StoreSnapshot of(TestStack stack) {
        return new StoreSnapshot(stack);
    }

    /** Fails, naming the differences, unless the table holds exactly the items it held when taken. */
    public void assertUnchanged(String what) {
        Map<String, Map<String, AttributeValue>> now = byKey(stack.allItems());
        List<String> differences = new ArrayList<>();
        items.forEach((key, item) -> {
            Map<String, AttributeValue> after = now.get(key);
            if (after == null) {
                differences.add("removed " + key);
            } else if (!after.equals(item)) {
                differences.add("changed " + key + ": " + item + " -> " + after);
            }
        });
        now.forEach((key, item) -> {
            if (!items.containsKey(key)) {
                differences.add("added " + key + ": " + item);
            }
        });
        if (!differences.isEmpty()) {
            fail(what + " must write nothing, but: " + String.join("; ", differences));
        }
    }

    private static Map<String, Map<String, AttributeValue>> byKey(List<Map<String, AttributeValue>> all) {
        Map<String, Map<String, AttributeValue>> out = new TreeMap<>();
        all.forEach(item -> out.put(item.get("pk").s() + " | " + item.get("sk").s(), item));
        return out;
    }
}
