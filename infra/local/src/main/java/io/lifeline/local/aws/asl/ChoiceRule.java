package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;

/** A Choice rule of the supported subset: a comparison, or And/Or/Not of rules. */
sealed interface ChoiceRule {
    /** True if the rule holds for the Choice state's effective input; a Variable selecting nothing fails. */
    boolean test(JsonNode input, JsonNode context);

    /** A top-level rule and the state it leads to. */
    record Branch(ChoiceRule rule, String next) {
    }

    record And(List<ChoiceRule> rules) implements ChoiceRule {
        public boolean test(JsonNode input, JsonNode context) {
            // Short-circuits, so an IsPresent first guards the comparisons after it, as the service documents.
            return rules.stream().allMatch(r -> r.test(input, context));
        }
    }

    record Or(List<ChoiceRule> rules) implements ChoiceRule {
        public boolean test(JsonNode input, JsonNode context) {
            return rules.stream().anyMatch(r -> r.test(input, context));
        }
    }

    record Not(ChoiceRule rule) implements ChoiceRule {
        public boolean test(JsonNode input, JsonNode context) {
            return !rule.test(input, context);
        }
    }

    enum Kind { STRING, NUMERIC, BOOLEAN, IS_PRESENT, IS_NULL }

    /** Variable compared with a literal value or, for the ...Path operators, with the value another path selects. */
    record Comparison(RefPath variable, String operator, Kind kind, IntPredicate order, JsonNode value, RefPath valuePath)
            implements ChoiceRule {
        public boolean test(JsonNode input, JsonNode context) {
            Optional<JsonNode> found = variable.select(input, context);
            if (kind == Kind.IS_PRESENT) {
                return found.isPresent() == value.booleanValue();
            }
            JsonNode v = found.orElseThrow(() -> new PathFailure("Invalid path '" + variable
                    + "': the Choice rule's Variable selects nothing (guard it with IsPresent)"));
            JsonNode other = valuePath == null ? value : valuePath.select(input, context).orElseThrow(
                    () -> new PathFailure("Invalid path '" + valuePath + "' in " + operator + ": it selects nothing"));
            // A value of the wrong type makes the comparison false rather than an error, as in the service.
            return switch (kind) {
                case IS_NULL -> v.isNull() == other.booleanValue();
                case STRING -> v.isTextual() && other.isTextual() && v.textValue().equals(other.textValue());
                case BOOLEAN -> v.isBoolean() && other.isBoolean() && v.booleanValue() == other.booleanValue();
                case NUMERIC -> v.isNumber() && other.isNumber()
                        && order.test(v.decimalValue().compareTo(other.decimalValue()));
                case IS_PRESENT -> throw new AssertionError();
            };
        }
    }

    /** Parses one rule; {@code where} prefixes messages (e.g. "State 'X': Choices[1]"). */
    static ChoiceRule parse(JsonNode rule, String where, boolean topLevel) {
        if (!rule.isObject()) {
            throw new AslException(where + ": a Choice rule must be an object");
        }
        String operator = null;
        for (Iterator<String> it = rule.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (field.equals("Variable") || field.equals("Comment") || (topLevel && field.equals("Next"))) {
                continue;
            }
            if (field.equals("Next")) {
                throw new AslException(where + ": 'Next' is only allowed on a top-level Choice rule");
            }
            if (operator != null) {
                throw new AslException(where + ": a Choice rule has exactly one operator, found '" + operator
                        + "' and '" + field + "'");
            }
            operator = field;
        }
        if (operator == null) {
            throw new AslException(where + ": a Choice rule needs an operator");
        }
        JsonNode operand = rule.get(operator);
        String at = where + ": " + operator;
        switch (operator) {
            case "And", "Or" -> {
                requireNoVariable(rule, at);
                if (!operand.isArray() || operand.isEmpty()) {
                    throw new AslException(at + " must be a non-empty array of rules");
                }
                List<ChoiceRule> rules = new ArrayList<>();
                for (int i = 0; i < operand.size(); i++) {
                    rules.add(parse(operand.get(i), at + "[" + i + "]", false));
                }
                return operator.equals("And") ? new And(List.copyOf(rules)) : new Or(List.copyOf(rules));
            }
            case "Not" -> {
                requireNoVariable(rule, at);
                return new Not(parse(operand, at, false));
            }
            default -> {
                return comparison(rule, operator, operand, at, where);
            }
        }
    }

    private static Comparison comparison(JsonNode rule, String operator, JsonNode operand, String at, String where) {
        boolean byPath = operator.endsWith("Path");
        String base = byPath ? operator.substring(0, operator.length() - 4) : operator;
        Kind kind;
        IntPredicate order = null;
        switch (base) {
            case "StringEquals" -> kind = Kind.STRING;
            case "BooleanEquals" -> kind = Kind.BOOLEAN;
            case "NumericEquals" -> { kind = Kind.NUMERIC; order = c -> c == 0; }
            case "NumericLessThan" -> { kind = Kind.NUMERIC; order = c -> c < 0; }
            case "NumericLessThanEquals" -> { kind = Kind.NUMERIC; order = c -> c <= 0; }
            case "NumericGreaterThan" -> { kind = Kind.NUMERIC; order = c -> c > 0; }
            case "NumericGreaterThanEquals" -> { kind = Kind.NUMERIC; order = c -> c >= 0; }
            case "IsPresent" -> kind = byPath ? null : Kind.IS_PRESENT;
            case "IsNull" -> kind = byPath ? null : Kind.IS_NULL;
            default -> kind = null;
        }
        if (kind == null) {
            throw new AslException(where + ": unsupported Choice operator '" + operator + "' (supported: And, Or, Not,"
                    + " IsPresent, IsNull, StringEquals[Path], BooleanEquals[Path], Numeric{Equals,LessThan,"
                    + "LessThanEquals,GreaterThan,GreaterThanEquals}[Path])");
        }
        JsonNode variable = rule.get("Variable");
        if (variable == null || !variable.isTextual()) {
            throw new AslException(at + " needs a 'Variable' path string");
        }
        RefPath variablePath = path(variable.asText(), where + ": Variable");
        if (byPath) {
            if (!operand.isTextual()) {
                throw new AslException(at + " must be a path string");
            }
            return new Comparison(variablePath, operator, kind, order, null, path(operand.asText(), at));
        }
        boolean typeOk = switch (kind) {
            case STRING -> operand.isTextual();
            case NUMERIC -> operand.isNumber();
            default -> operand.isBoolean();
        };
        if (!typeOk) {
            throw new AslException(at + " has a value of the wrong type: " + operand);
        }
        return new Comparison(variablePath, operator, kind, order, operand, null);
    }

    private static RefPath path(String text, String at) {
        try {
            return RefPath.parse(text);
        } catch (IllegalArgumentException e) {
            throw new AslException(at + ": " + e.getMessage());
        }
    }

    private static void requireNoVariable(JsonNode rule, String at) {
        if (rule.has("Variable")) {
            throw new AslException(at + " takes no 'Variable'");
        }
    }
}
