package io.lifeline.engine.expr;

import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The parsed forms of DynamoDB's expressions: operands, conditions and update actions. */
public final class Ast {
    private Ast() {
    }

    /** Something with a value: a path, a literal {@code :value}, or a function or arithmetic over operands. */
    public sealed interface Operand permits PathOp, Literal, Size, IfNotExists, ListAppend, Arith {
    }

    /** The value at a path of the item. */
    public record PathOp(Path path) implements Operand {
    }

    /** An {@code :value}, already looked up. */
    public record Literal(String name, AttributeValue value) implements Operand {
    }

    /** {@code size(path)}. */
    public record Size(Path path) implements Operand {
    }

    /** {@code if_not_exists(path, operand)} (update expressions only). */
    public record IfNotExists(Path path, Operand fallback) implements Operand {
    }

    /** {@code list_append(a, b)} (update expressions only). */
    public record ListAppend(Operand first, Operand second) implements Operand {
    }

    /** {@code a + b} or {@code a - b} (update expressions only). */
    public record Arith(Operand left, boolean plus, Operand right) implements Operand {
    }

    /** A condition: true or false of an item. */
    public sealed interface Condition permits Compare, Between, In, And, Or, Not, Function {
    }

    /** {@code a op b} for one of {@code = <> < <= > >=}. */
    public record Compare(String op, Operand left, Operand right) implements Condition {
    }

    /** {@code a BETWEEN lo AND hi}. */
    public record Between(Operand value, Operand low, Operand high) implements Condition {
    }

    /** {@code a IN (b, c, ...)}. */
    public record In(Operand value, List<Operand> candidates) implements Condition {
    }

    /** {@code a AND b}. */
    public record And(Condition left, Condition right) implements Condition {
    }

    /** {@code a OR b}. */
    public record Or(Condition left, Condition right) implements Condition {
    }

    /** {@code NOT a}. */
    public record Not(Condition inner) implements Condition {
    }

    /** attribute_exists, attribute_not_exists, attribute_type, begins_with or contains. */
    public record Function(String name, Path path, Operand argument) implements Condition {
    }

    /** One action of an update expression. */
    public sealed interface Action permits Set, Remove, Add, Delete {
        /** The path the action writes. */
        Path path();
    }

    /** {@code SET path = value}. */
    public record Set(Path path, Operand value) implements Action {
    }

    /** {@code REMOVE path}. */
    public record Remove(Path path) implements Action {
    }

    /** {@code ADD path :value}. */
    public record Add(Path path, Literal value) implements Action {
    }

    /** {@code DELETE path :value}. */
    public record Delete(Path path, Literal value) implements Action {
    }
}
