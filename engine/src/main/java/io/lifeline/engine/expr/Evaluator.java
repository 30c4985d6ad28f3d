package io.lifeline.engine.expr;

import io.lifeline.engine.Errors;
import io.lifeline.engine.Values;
import io.lifeline.engine.expr.Ast.Action;
import io.lifeline.engine.expr.Ast.Condition;
import io.lifeline.engine.expr.Ast.Operand;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Evaluates conditions against an item and applies update actions to it.
 *
 * <p>Conditions: a comparison with a missing operand or operands of different types is false ({@code <>} true);
 * {@code size} of a string counts its characters ("Comparison operator and function reference": "size(Brand)
 * less than or equal to 20 characters"), of a binary its bytes, of a set, list or map its elements, and
 * of anything else is missing. Updates: every SET operand is evaluated against the item as it was before the
 * update ("Update expressions", SET), then the actions are applied; REMOVEs of list elements apply from the highest
 * index down so each index names the element it named in the original list.
 */
public final class Evaluator {
    private static final String BAD_TYPE = "An operand in the update expression has an incorrect data type";

    private Evaluator() {
    }

    /** Whether {@code c} holds of {@code item} (an empty map for an item that does not exist). */
    public static boolean test(Condition c, Map<String, AttributeValue> item) {
        if (c instanceof Ast.And a) {
            return test(a.left(), item) && test(a.right(), item);
        }
        if (c instanceof Ast.Or o) {
            return test(o.left(), item) || test(o.right(), item);
        }
        if (c instanceof Ast.Not n) {
            return !test(n.inner(), item);
        }
        if (c instanceof Ast.Compare cmp) {
            return compare(cmp.op(), value(cmp.left(), item), value(cmp.right(), item));
        }
        if (c instanceof Ast.Between b) {
            return between(value(b.value(), item), value(b.low(), item), value(b.high(), item));
        }
        if (c instanceof Ast.In in) {
            return in(value(in.value(), item), in.candidates(), item);
        }
        return function((Ast.Function) c, item);
    }

    private static boolean compare(String op, AttributeValue a, AttributeValue b) {
        if (op.equals("=")) {
            return Values.same(a, b);
        }
        if (op.equals("<>")) {
            return !Values.same(a, b);
        }
        if (!Values.comparable(a, b)) {
            return false;
        }
        int c = Values.compare(a, b);
        return switch (op) {
            case "<" -> c < 0;
            case "<=" -> c <= 0;
            case ">" -> c > 0;
            default -> c >= 0;
        };
    }

    private static boolean between(AttributeValue v, AttributeValue lo, AttributeValue hi) {
        return Values.comparable(v, lo) && Values.comparable(v, hi) && Values.compare(v, lo) >= 0
                && Values.compare(v, hi) <= 0;
    }

    private static boolean in(AttributeValue v, List<Operand> candidates, Map<String, AttributeValue> item) {
        for (Operand o : candidates) {
            if (Values.same(v, value(o, item))) {
                return true;
            }
        }
        return false;
    }

    private static boolean function(Ast.Function f, Map<String, AttributeValue> item) {
        AttributeValue v = Documents.get(item, f.path());
        AttributeValue arg = f.argument() == null ? null : value(f.argument(), item);
        return switch (f.name()) {
            case "attribute_exists" -> v != null;
            case "attribute_not_exists" -> v == null;
            case "attribute_type" -> v != null && arg != null && arg.s() != null && Values.type(v).equals(arg.s());
            case "begins_with" -> beginsWith(v, arg);
            default -> contains(v, arg);
        };
    }

    private static boolean beginsWith(AttributeValue v, AttributeValue prefix) {
        if (v == null || prefix == null) {
            return false;
        }
        if (v.s() != null && prefix.s() != null) {
            return v.s().startsWith(prefix.s());
        }
        if (v.b() != null && prefix.b() != null) {
            return Values.startsWith(v.b().asByteArrayUnsafe(), prefix.b().asByteArrayUnsafe());
        }
        return false;
    }

    private static boolean contains(AttributeValue v, AttributeValue x) {
        if (v == null || x == null) {
            return false;
        }
        return switch (Values.type(v)) {
            case "S" -> x.s() != null && v.s().contains(x.s());
            case "B" -> x.b() != null && indexOf(v.b().asByteArrayUnsafe(), x.b().asByteArrayUnsafe()) >= 0;
            case "SS" -> x.s() != null && v.ss().contains(x.s());
            case "NS" -> x.n() != null && v.ns().stream().anyMatch(n -> Values.same(AttributeValue.fromN(n), x));
            case "BS" -> x.b() != null && v.bs().contains(x.b());
            case "L" -> v.l().stream().anyMatch(e -> Values.same(e, x));
            default -> false;
        };
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** An operand's value in a condition, or null where it has none. */
    static AttributeValue value(Operand o, Map<String, AttributeValue> item) {
        if (o instanceof Ast.Literal l) {
            return l.value();
        }
        if (o instanceof Ast.PathOp p) {
            return Documents.get(item, p.path());
        }
        if (o instanceof Ast.Size sz) {
            return size(Documents.get(item, sz.path()));
        }
        throw Errors.unsupported("this operand in a condition: " + o);
    }

    private static AttributeValue size(AttributeValue v) {
        if (v == null) {
            return null;
        }
        long n = switch (Values.type(v)) {
            case "S" -> v.s().codePointCount(0, v.s().length());
            case "B" -> v.b().asByteArrayUnsafe().length;
            case "SS" -> v.ss().size();
            case "NS" -> v.ns().size();
            case "BS" -> v.bs().size();
            case "L" -> v.l().size();
            case "M" -> v.m().size();
            default -> -1;
        };
        return n < 0 ? null : AttributeValue.fromN(Long.toString(n));
    }

    /** Applies {@code actions} to {@code old} (empty for a new item) and answers the new item. */
    public static Map<String, AttributeValue> update(List<Action> actions, Map<String, AttributeValue> old) {
        List<AttributeValue> computed = new ArrayList<>();
        for (Action a : actions) {
            computed.add(compute(a, old));
        }
        Map<String, AttributeValue> item = old;
        List<Path> removes = new ArrayList<>();
        for (int i = 0; i < actions.size(); i++) {
            Action a = actions.get(i);
            if (a instanceof Ast.Remove) {
                removes.add(a.path());
            } else if (computed.get(i) == null) {
                item = Documents.remove(item, a.path());
            } else {
                item = Documents.set(item, a.path(), computed.get(i));
            }
        }
        removes.sort(Comparator.comparingInt(Evaluator::lastIndex).reversed());
        for (Path p : removes) {
            item = Documents.remove(item, p);
        }
        return item;
    }

    private static int lastIndex(Path p) {
        Path.Element e = p.elements().get(p.elements().size() - 1);
        return e instanceof Path.Index i ? i.index() : -1;
    }

    private static AttributeValue compute(Action a, Map<String, AttributeValue> old) {
        if (a instanceof Ast.Set set) {
            return operand(set.value(), old);
        }
        if (a instanceof Ast.Add add) {
            return add(Documents.get(old, add.path()), add.value().value());
        }
        if (a instanceof Ast.Delete d) {
            return delete(Documents.get(old, d.path()), d.value().value());
        }
        return null;
    }

    private static AttributeValue operand(Operand o, Map<String, AttributeValue> old) {
        if (o instanceof Ast.Literal l) {
            return l.value();
        }
        if (o instanceof Ast.PathOp p) {
            return present(Documents.get(old, p.path()));
        }
        if (o instanceof Ast.IfNotExists f) {
            AttributeValue v = Documents.get(old, f.path());
            return v != null ? v : operand(f.fallback(), old);
        }
        if (o instanceof Ast.ListAppend la) {
            AttributeValue a = operand(la.first(), old);
            AttributeValue b = operand(la.second(), old);
            if (!a.hasL() || !b.hasL()) {
                throw Errors.validation(BAD_TYPE);
            }
            List<AttributeValue> l = new ArrayList<>(a.l());
            l.addAll(b.l());
            return AttributeValue.fromL(l);
        }
        if (o instanceof Ast.Arith ar) {
            AttributeValue a = operand(ar.left(), old);
            AttributeValue b = operand(ar.right(), old);
            if (a.n() == null || b.n() == null) {
                throw Errors.validation(BAD_TYPE);
            }
            BigDecimal x = Values.number(a.n());
            BigDecimal y = Values.number(b.n());
            return Values.n(arith(ar.plus() ? x.add(y) : x.subtract(y)));
        }
        throw Errors.validation("Invalid UpdateExpression: The function is not allowed in an update expression; "
                + "function: size");
    }

    private static BigDecimal arith(BigDecimal r) {
        return Values.checked(r);
    }

    private static AttributeValue present(AttributeValue v) {
        if (v == null) {
            throw Errors.validation("The provided expression refers to an attribute that does not exist in the item");
        }
        return v;
    }

    private static AttributeValue add(AttributeValue old, AttributeValue v) {
        String t = Values.type(v);
        if (old == null) {
            return v;
        }
        if (!Values.type(old).equals(t)) {
            throw Errors.validation(BAD_TYPE);
        }
        return switch (t) {
            case "N" -> Values.n(arith(Values.number(old.n()).add(Values.number(v.n()))));
            case "SS" -> AttributeValue.fromSs(union(old.ss(), v.ss()));
            case "NS" -> AttributeValue.fromNs(numberUnion(old.ns(), v.ns()));
            default -> AttributeValue.fromBs(union(old.bs(), v.bs()));
        };
    }

    private static <T> List<T> union(List<T> a, List<T> b) {
        LinkedHashSet<T> s = new LinkedHashSet<>(a);
        s.addAll(b);
        return List.copyOf(s);
    }

    private static List<String> numberUnion(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        for (String n : b) {
            if (out.stream().noneMatch(x -> Values.number(x).compareTo(Values.number(n)) == 0)) {
                out.add(n);
            }
        }
        return out;
    }

    private static AttributeValue delete(AttributeValue old, AttributeValue v) {
        if (old == null) {
            return null;
        }
        String t = Values.type(v);
        if (!Values.type(old).equals(t)) {
            throw Errors.validation(BAD_TYPE);
        }
        return switch (t) {
            case "SS" -> emptyIsNull(old.ss().stream().filter(x -> !v.ss().contains(x)).toList(), 0);
            case "NS" -> emptyIsNull(old.ns().stream().filter(x -> v.ns().stream()
                    .noneMatch(y -> Values.number(x).compareTo(Values.number(y)) == 0)).toList(), 1);
            default -> emptyIsNull(old.bs().stream().filter(x -> !v.bs().contains(x)).toList(), 2);
        };
    }

    @SuppressWarnings("unchecked")
    private static AttributeValue emptyIsNull(List<?> rest, int kind) {
        if (rest.isEmpty()) {
            return null;
        }
        return switch (kind) {
            case 0 -> AttributeValue.fromSs((List<String>) rest);
            case 1 -> AttributeValue.fromNs((List<String>) rest);
            default -> AttributeValue.fromBs((List<SdkBytes>) rest);
        };
    }
}
