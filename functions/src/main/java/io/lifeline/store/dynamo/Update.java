package io.lifeline.store.dynamo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Builds one conditional UpdateItem. Every attribute name goes through a placeholder, so reserved words
 * (status, name, role) need no special care.
 */
public final class Update {
    /** A value placeholder ({@link #value}). */
    private static final Pattern VALUE = Pattern.compile(":v\\d+");
    private final String table;
    private final Map<String, AttributeValue> key;
    private final List<String> sets = new ArrayList<>();
    private final List<String> removes = new ArrayList<>();
    private final List<String> conditions = new ArrayList<>();
    private final Map<String, String> names = new HashMap<>();
    private final Map<String, AttributeValue> values = new HashMap<>();
    private int nextValue;
    private int nextPath;

    public Update(String table, Map<String, AttributeValue> key) {
        this.table = table;
        this.key = key;
    }

    /** {@code #attr} for an attribute name. */
    public String name(String attribute) {
        String placeholder = "#" + attribute;
        names.put(placeholder, attribute);
        return placeholder;
    }

    /** {@code #aN} for an attribute name that may hold characters a placeholder may not (an id, a reason). */
    public String anyName(String attribute) {
        String placeholder = "#a" + nextPath++;
        names.put(placeholder, attribute);
        return placeholder;
    }

    /** A fresh {@code :vN} for a value. */
    public String value(AttributeValue v) {
        String placeholder = ":v" + nextValue++;
        values.put(placeholder, v);
        return placeholder;
    }

    /**
     * SET of an attribute; it replaces a REMOVE of the same attribute added before (DynamoDB refuses an expression
     * that names one path twice), so a write may set what a shared stamp such as a transition's removes.
     */
    public Update set(String attribute, AttributeValue v) {
        return setExpression(attribute, value(v));
    }

    /**
     * SET with a raw right-hand side, e.g. {@code #beats + :v1}; build operands with name()/value(). As {@link #set},
     * and a later SET of the same attribute replaces an earlier one (the last one asked for is written).
     */
    public Update setExpression(String attribute, String expression) {
        String path = name(attribute);
        removes.remove(path);
        for (String earlier : List.copyOf(sets)) {
            if (earlier.startsWith(path + " = ")) {
                sets.remove(earlier);
                Matcher m = VALUE.matcher(earlier); // its values go with it (DynamoDB refuses an unused one)
                while (m.find()) {
                    String v = m.group();
                    if (sets.stream().noneMatch(e -> uses(e, v)) && conditions.stream().noneMatch(e -> uses(e, v))
                            && !uses(expression, v)) {
                        values.remove(v);
                    }
                }
            }
        }
        sets.add(path + " = " + expression);
        return this;
    }

    /**
     * {@code #attr.#pN}: a path to the entry {@code key} of the map attribute {@code attribute}, the key through a
     * placeholder of its own (map keys may hold characters a placeholder name may not).
     */
    public String mapPath(String attribute, String key) {
        String placeholder = "#p" + nextPath++;
        names.put(placeholder, key);
        return name(attribute) + "." + placeholder;
    }

    /** SET of a path built with {@link #mapPath}. */
    public Update setPath(String path, AttributeValue v) {
        sets.add(path + " = " + value(v));
        return this;
    }

    /** SET of a path built with {@link #mapPath} with a raw right-hand side, e.g. {@code if_not_exists(...) + :v1}. */
    public Update setPathExpression(String path, String expression) {
        sets.add(path + " = " + expression);
        return this;
    }

    /** Whether {@code expression} uses the value placeholder {@code v} (whole: {@code :v1} is not in {@code :v12}). */
    private static boolean uses(String expression, String v) {
        return Pattern.compile(Pattern.quote(v) + "(?!\\d)").matcher(expression).find();
    }

    /** REMOVE of a path built with {@link #mapPath}. */
    public Update removePath(String path) {
        removes.add(path);
        return this;
    }

    /** REMOVE of an attribute, once however often it is asked for. */
    public Update remove(String attribute) {
        String path = name(attribute);
        if (!removes.contains(path)) {
            removes.add(path);
        }
        return this;
    }

    public Update condition(String expression) {
        conditions.add("(" + expression + ")");
        return this;
    }

    /** {@code #attr IN (:a, :b, ...)}. */
    public String in(String attribute, List<AttributeValue> options) {
        StringBuilder sb = new StringBuilder(name(attribute)).append(" IN (");
        for (int i = 0; i < options.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(value(options.get(i)));
        }
        return sb.append(')').toString();
    }

    private String expression() {
        StringBuilder sb = new StringBuilder();
        if (!sets.isEmpty()) {
            sb.append("SET ").append(String.join(", ", sets));
        }
        if (!removes.isEmpty()) {
            sb.append(sb.length() == 0 ? "" : " ").append("REMOVE ").append(String.join(", ", removes));
        }
        return sb.toString();
    }

    private String conditionExpression() {
        return conditions.isEmpty() ? null : String.join(" AND ", conditions);
    }

    /**
     * Writes this update, returning nothing; true when written, false when its condition refused it (another writer got
     * there first, or there was nothing to change). The store's own failures throw, as {@link StoreFailures} says.
     */
    public boolean writeIf(DynamoDbClient dynamo, String what) {
        try {
            StoreFailures.call(what, () -> dynamo.updateItem(request(ReturnValue.NONE)));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    public UpdateItemRequest request(ReturnValue returnValue) {
        return UpdateItemRequest.builder()
                .tableName(table)
                .key(key)
                .updateExpression(expression())
                .conditionExpression(conditionExpression())
                .expressionAttributeNames(names)
                .expressionAttributeValues(values.isEmpty() ? null : values)
                .returnValues(returnValue)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
    }

    /** This update's condition alone, as a ConditionCheck of a transaction (its SET and REMOVE are not used). */
    public TransactWriteItem conditionCheckItem() {
        return TransactWriteItem.builder().conditionCheck(c -> c
                .tableName(table)
                .key(key)
                .conditionExpression(conditionExpression())
                .expressionAttributeNames(names)
                .expressionAttributeValues(values.isEmpty() ? null : values)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
                .build();
    }

    /**
     * The same update as one item of a transaction: the request's fields, taken from {@link #request} so the two
     * cannot drift apart (the SDK's two builders share no type), less what to return on success.
     */
    public TransactWriteItem transactItem() {
        UpdateItemRequest r = request(null);
        return TransactWriteItem.builder().update(u -> u
                .tableName(r.tableName())
                .key(r.key())
                .updateExpression(r.updateExpression())
                .conditionExpression(r.conditionExpression())
                .expressionAttributeNames(r.expressionAttributeNames())
                .expressionAttributeValues(r.expressionAttributeValues())
                .returnValuesOnConditionCheckFailure(r.returnValuesOnConditionCheckFailure()))
                .build();
    }
}
