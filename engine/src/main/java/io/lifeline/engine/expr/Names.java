package io.lifeline.engine.expr;

import io.lifeline.engine.Errors;
import io.lifeline.engine.Values;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import software.amazon.awssdk.core.util.SdkAutoConstructMap;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One request's {@code ExpressionAttributeNames} and {@code ExpressionAttributeValues}, and which of them its
 * expressions used: DynamoDB refuses a request that defines a name or value no expression uses.
 *
 * <p>Bare names may not be DynamoDB's reserved words (the list is AWS's own,
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ReservedWords.html">Reserved words in
 * DynamoDB</a>, held in {@code reserved-words.txt}).
 */
public final class Names {
    private static final Set<String> RESERVED = load();
    private final Map<String, String> names;
    private final Map<String, AttributeValue> values;
    private final Set<String> usedNames = new HashSet<>();
    private final Set<String> usedValues = new HashSet<>();

    /** Takes the request's maps, either of which may be null or empty. */
    public Names(Map<String, String> names, Map<String, AttributeValue> values) {
        this.names = names == null ? Map.of() : names;
        this.values = values == null ? Map.of() : Values.canonical(values);
        if (names != null && names.isEmpty() && !(names instanceof SdkAutoConstructMap)) {
            throw Errors.validation("ExpressionAttributeNames must not be empty");
        }
        if (values != null && values.isEmpty() && !(values instanceof SdkAutoConstructMap)) {
            throw Errors.validation("ExpressionAttributeValues must not be empty");
        }
    }

    private static Set<String> load() {
        Set<String> out = new HashSet<>();
        try (InputStream in = Names.class.getResourceAsStream("/io/lifeline/engine/reserved-words.txt");
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    out.add(line.strip().toUpperCase(Locale.ROOT));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Set.copyOf(out);
    }

    /** Whether a bare name is a reserved word. */
    public static boolean reserved(String word) {
        return RESERVED.contains(word.toUpperCase(Locale.ROOT));
    }

    /** Resolves {@code #alias}, or throws (the message's prefix names the expression). */
    String name(String alias, String prefix) {
        String n = names.get(alias);
        if (n == null) {
            throw Errors.validation(prefix + "An expression attribute name used in the document path is not defined;"
                    + " attribute name: " + alias);
        }
        usedNames.add(alias);
        return n;
    }

    /** Resolves {@code :value}, or throws. */
    AttributeValue value(String ref, String prefix) {
        AttributeValue v = values.get(ref);
        if (v == null) {
            throw Errors.validation(prefix + "An expression attribute value used in expression is not defined;"
                    + " attribute value: " + ref);
        }
        usedValues.add(ref);
        return v;
    }

    /** After every expression of the request is parsed: refuses names and values none used. */
    public void requireAllUsed() {
        if (usedValues.size() == values.size() && usedNames.size() == names.size()) {
            return; // each used one was looked up in its map: as many used as given means every one was
        }
        Set<String> unusedValues = new TreeSet<>(values.keySet());
        unusedValues.removeAll(usedValues);
        if (!unusedValues.isEmpty()) {
            throw Errors.validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {"
                    + String.join(", ", unusedValues) + "}");
        }
        Set<String> unusedNames = new TreeSet<>(names.keySet());
        unusedNames.removeAll(usedNames);
        if (!unusedNames.isEmpty()) {
            throw Errors.validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {"
                    + String.join(", ", unusedNames) + "}");
        }
    }
}
