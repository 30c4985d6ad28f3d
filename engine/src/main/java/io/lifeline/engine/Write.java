package io.lifeline.engine;

import io.lifeline.engine.expr.Ast;
import io.lifeline.engine.expr.Documents;
import io.lifeline.engine.expr.Evaluator;
import io.lifeline.engine.expr.Names;
import io.lifeline.engine.expr.Parser;
import io.lifeline.engine.expr.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * One write, checked and parsed before anything is read: a Put, an Update, a Delete or a ConditionCheck, with its
 * condition. The same plan serves the single-item calls, TransactWriteItems and BatchWriteItem, so all four agree.
 */
final class Write {
    enum Kind { PUT, UPDATE, DELETE, CHECK }

    final Table table;
    final Kind kind;
    final Map<String, AttributeValue> key;
    private final Map<String, AttributeValue> putItem;
    private final List<Ast.Action> actions;
    private final Ast.Condition condition;
    final boolean returnOldOnFailure;

    private Write(Table table, Kind kind, Map<String, AttributeValue> key, Map<String, AttributeValue> putItem,
            List<Ast.Action> actions, Ast.Condition condition, boolean returnOldOnFailure) {
        this.table = table;
        this.kind = kind;
        this.key = key;
        this.putItem = putItem;
        this.actions = actions;
        this.condition = condition;
        this.returnOldOnFailure = returnOldOnFailure;
    }

    /** The request's parts a write plan is made from (the SDK's request classes share no interface). */
    record Spec(Kind kind, Map<String, AttributeValue> keyOrItem, String update, String condition,
            Map<String, String> names, Map<String, AttributeValue> values, boolean returnOldOnFailure) {
    }

    static Write of(Table t, Spec s) {
        Checks.values(s.values());
        Names names = new Names(s.names(), s.values());
        Ast.Condition cond = present(s.condition())
                ? Parser.condition(s.condition(), "ConditionExpression", names) : null;
        if (s.kind() == Kind.CHECK && cond == null) {
            throw Errors.validation("The ConditionExpression of a ConditionCheck must not be empty");
        }
        List<Ast.Action> actions = List.of();
        if (s.kind() == Kind.UPDATE && present(s.update())) {
            actions = Parser.update(s.update(), names);
            checkActions(t, actions);
        }
        names.requireAllUsed();
        if (s.kind() == Kind.PUT) {
            Checks.values(s.keyOrItem());
            Map<String, AttributeValue> item = Values.canonical(s.keyOrItem());
            Checks.item(t, item, false);
            return new Write(t, Kind.PUT, t.keyOf(item), item, actions, cond,
                    s.returnOldOnFailure());
        }
        Checks.key(t, s.keyOrItem());
        return new Write(t, s.kind(), t.keyOf(Values.canonical(s.keyOrItem())), null, actions, cond, s.returnOldOnFailure());
    }

    private static boolean present(String s) {
        return s != null;
    }

    private static void checkActions(Table t, List<Ast.Action> actions) {
        for (int i = 0; i < actions.size(); i++) {
            Path p = actions.get(i).path();
            if (t.keyNames().contains(p.root())) {
                throw Errors.validation("One or more parameter values were invalid: Cannot update attribute "
                        + p.root() + ". This attribute is part of the key");
            }
            for (int j = 0; j < i; j++) {
                Path q = actions.get(j).path();
                if (p.overlaps(q)) {
                    throw Errors.validation("Invalid UpdateExpression: Two document paths overlap with each other; "
                            + "must remove or rewrite one of these paths; path one: " + q + ", path two: " + p);
                }
            }
        }
    }

    /** Whether the condition holds of the item as it is ({@code old} null: no item). */
    boolean holds(Map<String, AttributeValue> old) {
        return condition == null || Evaluator.test(condition, old == null ? Map.of() : old);
    }

    /** The item after this write ({@code old} itself for a ConditionCheck, null for a Delete). */
    Map<String, AttributeValue> after(Map<String, AttributeValue> old) {
        switch (kind) {
            case PUT -> {
                return putItem;
            }
            case DELETE -> {
                return null;
            }
            case CHECK -> {
                return old;
            }
            default -> {
                Map<String, AttributeValue> base = old == null ? new LinkedHashMap<>(key) : old;
                Map<String, AttributeValue> item = Evaluator.update(actions, base);
                Checks.item(table, item, true);
                return item;
            }
        }
    }

    /** The paths an update wrote, for UPDATED_OLD and UPDATED_NEW. */
    List<Path> updatedPaths() {
        List<Path> out = new ArrayList<>();
        for (Ast.Action a : actions) {
            out.add(a.path());
        }
        return out;
    }

    /** What ReturnValues asks for, of the item before and after. */
    Map<String, AttributeValue> returned(String mode, Map<String, AttributeValue> old,
            Map<String, AttributeValue> now) {
        return switch (mode) {
            case "ALL_OLD" -> old;
            case "ALL_NEW" -> now;
            case "UPDATED_OLD" -> old == null ? null : Documents.project(old, updatedPaths());
            case "UPDATED_NEW" -> now == null ? null : Documents.project(now, updatedPaths());
            default -> null;
        };
    }
}
