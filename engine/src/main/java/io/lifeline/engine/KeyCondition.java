package io.lifeline.engine;

import io.lifeline.engine.expr.Ast;
import io.lifeline.engine.expr.Path;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A KeyConditionExpression taken apart: equality on the partition key, and at most one condition on the sort key
 * ({@code = < <= > >= BETWEEN begins_with}), joined by AND, as
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.KeyConditionExpressions.html">
 * Key condition expressions for query</a> allows.
 */
final class KeyCondition {
    private static final String PREFIX = "Invalid KeyConditionExpression: ";
    private AttributeValue hashValue;
    private String op;
    private AttributeValue a;
    private AttributeValue b;

    private KeyCondition() {
    }

    static KeyCondition of(Ast.Condition c, String hash, String range) {
        List<Ast.Condition> parts = new ArrayList<>();
        split(c, parts);
        if (parts.size() > 2) {
            throw Errors.validation(PREFIX + "The expression contains too many conditions");
        }
        KeyCondition kc = new KeyCondition();
        for (Ast.Condition part : parts) {
            kc.take(part, hash, range);
        }
        if (kc.hashValue == null) {
            throw Errors.validation("Query condition missed key schema element: " + hash);
        }
        return kc;
    }

    private static void split(Ast.Condition c, List<Ast.Condition> out) {
        if (c instanceof Ast.And and) {
            split(and.left(), out);
            split(and.right(), out);
        } else if (c instanceof Ast.Or) {
            throw Errors.validation(PREFIX + "Invalid operator used in KeyConditionExpression: OR");
        } else if (c instanceof Ast.Not) {
            throw Errors.validation(PREFIX + "Invalid operator used in KeyConditionExpression: NOT");
        } else if (c instanceof Ast.In) {
            throw Errors.validation(PREFIX + "Invalid operator used in KeyConditionExpression: IN");
        } else {
            out.add(c);
        }
    }

    private void take(Ast.Condition c, String hash, String range) {
        String attr;
        if (c instanceof Ast.Compare cmp && cmp.left() instanceof Ast.PathOp p && cmp.right() instanceof Ast.Literal l) {
            if (cmp.op().equals("<>")) {
                throw Errors.validation(PREFIX + "Unsupported operator in KeyConditionExpression: <>");
            }
            attr = name(p.path());
            if (attr.equals(hash)) {
                if (!cmp.op().equals("=") || hashValue != null) {
                    throw Errors.validation("Query key condition not supported");
                }
                hashValue = l.value();
                return;
            }
            sort(attr, range, cmp.op(), l.value(), null);
        } else if (c instanceof Ast.Between bt && bt.value() instanceof Ast.PathOp p
                && bt.low() instanceof Ast.Literal lo && bt.high() instanceof Ast.Literal hi) {
            sort(name(p.path()), range, "BETWEEN", lo.value(), hi.value());
        } else if (c instanceof Ast.Function f && f.name().equals("begins_with")
                && f.argument() instanceof Ast.Literal l) {
            sort(name(f.path()), range, "begins_with", l.value(), null);
        } else if (c instanceof Ast.Function f) {
            throw Errors.validation(PREFIX + "Invalid function name; function: " + f.name());
        } else {
            throw Errors.validation("Query key condition not supported");
        }
    }

    private static String name(Path p) {
        if (p.elements().size() != 1) {
            throw Errors.validation(PREFIX + "Nested attributes are not supported in key conditions");
        }
        return p.root();
    }

    private void sort(String attr, String range, String operator, AttributeValue x, AttributeValue y) {
        if (range == null || !attr.equals(range) || op != null) {
            throw Errors.validation("Query key condition not supported");
        }
        op = operator;
        a = x;
        b = y;
    }

    /** Refuses values whose types are not the key's (AWS checks this before reading). */
    void checkTypes(String hashType, String rangeType) {
        boolean ok = Values.type(hashValue).equals(hashType)
                && (a == null || Values.type(a).equals(rangeType)) && (b == null || Values.type(b).equals(rangeType));
        if (!ok) {
            mismatch();
        }
        if (op != null && op.equals("begins_with") && rangeType.equals("N")) {
            throw Errors.validation(PREFIX + "Incorrect operand type for operator or function; operator or function: "
                    + "begins_with, operand type: N");
        }
    }

    AttributeValue hashValue() {
        return hashValue;
    }

    /**
     * Where a sort key stands against the condition, in the direction of reading: -1 not yet in range (skip), 0 in
     * range (read), 1 past the range (stop).
     */
    int where(Key sortKey, boolean forward) {
        if (op == null) {
            return 0;
        }
        AttributeValue v = sortKey.value();
        int lowSide;
        int highSide;
        switch (op) {
            case "=" -> {
                int c = Values.compare(v, a);
                lowSide = c < 0 ? 1 : 0;
                highSide = c > 0 ? 1 : 0;
            }
            case "<" -> {
                lowSide = 0;
                highSide = Values.compare(v, a) >= 0 ? 1 : 0;
            }
            case "<=" -> {
                lowSide = 0;
                highSide = Values.compare(v, a) > 0 ? 1 : 0;
            }
            case ">" -> {
                lowSide = Values.compare(v, a) <= 0 ? 1 : 0;
                highSide = 0;
            }
            case ">=" -> {
                lowSide = Values.compare(v, a) < 0 ? 1 : 0;
                highSide = 0;
            }
            case "BETWEEN" -> {
                lowSide = Values.compare(v, a) < 0 ? 1 : 0;
                highSide = Values.compare(v, b) > 0 ? 1 : 0;
            }
            default -> {
                byte[] key = v.s() != null ? v.s().getBytes(StandardCharsets.UTF_8)
                        : v.b().asByteArrayUnsafe();
                byte[] prefix = a.s() != null ? a.s().getBytes(StandardCharsets.UTF_8)
                        : a.b().asByteArrayUnsafe();
                boolean starts = Values.startsWith(key, prefix);
                lowSide = !starts && Values.compareBytes(key, prefix) < 0 ? 1 : 0;
                highSide = !starts && lowSide == 0 ? 1 : 0;
            }
        }
        if (lowSide == 0 && highSide == 0) {
            return 0;
        }
        boolean before = forward ? lowSide == 1 : highSide == 1;
        return before ? -1 : 1;
    }

    private int mismatch() {
        throw Errors.validation("One or more parameter values were invalid: Condition parameter type does not match "
                + "schema type");
    }

    /** A Query's filter may not name the key attributes it queries by. */
    void refuseInFilter(Ast.Condition filter, Table t, Table.Index index) {
        List<String> keys = new ArrayList<>();
        keys.add(index == null ? t.hash : index.hash);
        String r = index == null ? t.range : index.range;
        if (r != null) {
            keys.add(r);
        }
        List<Path> paths = new ArrayList<>();
        collect(filter, paths);
        for (Path p : paths) {
            if (keys.contains(p.root())) {
                throw Errors.validation("Filter Expression can only contain non-primary key attributes: Primary key "
                        + "attribute: " + p.root());
            }
        }
    }

    private static void collect(Ast.Condition c, List<Path> out) {
        if (c instanceof Ast.And x) {
            collect(x.left(), out);
            collect(x.right(), out);
        } else if (c instanceof Ast.Or x) {
            collect(x.left(), out);
            collect(x.right(), out);
        } else if (c instanceof Ast.Not x) {
            collect(x.inner(), out);
        } else if (c instanceof Ast.Compare x) {
            operand(x.left(), out);
            operand(x.right(), out);
        } else if (c instanceof Ast.Between x) {
            operand(x.value(), out);
        } else if (c instanceof Ast.In x) {
            operand(x.value(), out);
        } else if (c instanceof Ast.Function f) {
            out.add(f.path());
        }
    }

    private static void operand(Ast.Operand o, List<Path> out) {
        if (o instanceof Ast.PathOp p) {
            out.add(p.path());
        } else if (o instanceof Ast.Size s) {
            out.add(s.path());
        }
    }
}
