package io.lifeline.engine.expr;

import io.lifeline.engine.Errors;
import io.lifeline.engine.Values;
import io.lifeline.engine.expr.Ast.Action;
import io.lifeline.engine.expr.Ast.Condition;
import io.lifeline.engine.expr.Ast.Literal;
import io.lifeline.engine.expr.Ast.Operand;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * A hand-written recursive-descent parser for DynamoDB's expression grammars, as
 * <a href="https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html">
 * Comparison operator and function reference</a>, <a href=
 * "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html">Update
 * expressions</a> and <a href=
 * "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html">Projection
 * expressions</a> define them. Precedence, lowest first: OR, AND, NOT, then comparisons, BETWEEN, IN and functions.
 * Names and values are resolved while parsing, so an undefined one is refused before anything is read or written.
 */
public final class Parser {
    private static final Set<String> CONDITION_FUNCTIONS =
            Set.of("attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains");
    private static final Set<String> CLAUSES = Set.of("SET", "REMOVE", "ADD", "DELETE");
    private static final Set<String> ADD_TYPES = Set.of("N", "SS", "NS", "BS");
    private static final Set<String> SET_TYPES = Set.of("SS", "NS", "BS");
    private static final Set<String> COMPARISONS = Set.of("=", "<>", "<", "<=", ">", ">=");
    private static final Set<String> TYPES = Set.of("S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M");
    private final List<Token> tokens;
    private final String source;
    private final String prefix;
    private final Names names;
    private int pos;

    private Parser(String source, String kind, Names names) {
        this.source = source;
        this.prefix = "Invalid " + kind + ": ";
        this.names = names;
        this.tokens = Lexer.lex(source, prefix);
    }

    /** A condition (ConditionExpression, FilterExpression or KeyConditionExpression; {@code kind} names which). */
    public static Condition condition(String text, String kind, Names names) {
        Parser p = new Parser(text, kind, names);
        Condition c = p.or();
        p.end();
        return c;
    }

    /** An update expression's actions, in the order written. */
    public static List<Action> update(String text, Names names) {
        Parser p = new Parser(text, "UpdateExpression", names);
        List<Action> actions = new ArrayList<>();
        Set<String> clauses = new HashSet<>();
        while (!p.atEnd()) {
            Token t = p.next();
            String clause = t.text.toUpperCase(Locale.ROOT);
            if (t.kind != Kind.WORD || !CLAUSES.contains(clause)) {
                throw p.syntax(t);
            }
            if (!clauses.add(clause)) {
                throw Errors.validation(p.prefix + "The \"" + clause + "\" section can only be used once in an update "
                        + "expression;");
            }
            do {
                actions.add(p.action(clause));
            } while (p.accept(","));
        }
        if (actions.isEmpty()) {
            throw Errors.validation(p.prefix + "The expression can not be empty;");
        }
        return actions;
    }

    /** A projection expression's paths. */
    public static List<Path> projection(String text, Names names) {
        Parser p = new Parser(text, "ProjectionExpression", names);
        List<Path> paths = new ArrayList<>();
        do {
            paths.add(p.path());
        } while (p.accept(","));
        p.end();
        return paths;
    }

    private Action action(String clause) {
        Path path = path();
        switch (clause) {
            case "SET" -> {
                expect("=");
                Operand value = setValue();
                return new Ast.Set(path, value);
            }
            case "REMOVE" -> {
                return new Ast.Remove(path);
            }
            case "ADD" -> {
                Literal v = literal("ADD");
                String type = Values.type(v.value());
                if (!ADD_TYPES.contains(type)) {
                    throw Errors.validation(prefix + "Incorrect operand type for operator or function; operator: ADD, "
                            + "operand type: " + Values.typeName(v.value()));
                }
                return new Ast.Add(path, v);
            }
            default -> {
                Literal v = literal("DELETE");
                if (!SET_TYPES.contains(Values.type(v.value()))) {
                    throw Errors.validation(prefix + "Incorrect operand type for operator or function; operator: DELETE,"
                            + " operand type: " + Values.typeName(v.value()));
                }
                return new Ast.Delete(path, v);
            }
        }
    }

    private Literal literal(String operator) {
        Token t = next();
        if (t.kind != Kind.VALUE) {
            throw Errors.validation(prefix + "Syntax error; token: \"" + t.text + "\", near: \"" + operator + "\"");
        }
        return new Literal(t.text, names.value(t.text, prefix));
    }

    private Operand setValue() {
        Operand left = updateOperand();
        if (peekIs("+") || peekIs("-")) {
            boolean plus = next().text.equals("+");
            return new Ast.Arith(left, plus, updateOperand());
        }
        return left;
    }

    private Operand updateOperand() {
        Token t = peek();
        if (t.kind == Kind.WORD && peekAt(1).text.equals("(")) {
            String fn = t.text;
            next();
            expect("(");
            Operand out;
            if (fn.equals("if_not_exists")) {
                Path p = path();
                expect(",");
                out = new Ast.IfNotExists(p, setValue());
            } else if (fn.equals("list_append")) {
                Operand a = setValue();
                expect(",");
                out = new Ast.ListAppend(a, setValue());
            } else if (fn.equals("size") || CONDITION_FUNCTIONS.contains(fn)) {
                throw Errors.validation(prefix + "The function is not allowed in an update expression; function: " + fn);
            } else {
                throw Errors.validation(prefix + "Invalid function name; function: " + fn);
            }
            expect(")");
            return out;
        }
        return plainOperand();
    }

    private Operand plainOperand() {
        Token t = peek();
        if (t.kind == Kind.VALUE) {
            next();
            return new Literal(t.text, names.value(t.text, prefix));
        }
        return new Ast.PathOp(path());
    }

    private Condition or() {
        Condition c = and();
        while (acceptWord("OR")) {
            c = new Ast.Or(c, and());
        }
        return c;
    }

    private Condition and() {
        Condition c = not();
        while (acceptWord("AND")) {
            c = new Ast.And(c, not());
        }
        return c;
    }

    private Condition not() {
        if (acceptWord("NOT")) {
            return new Ast.Not(not());
        }
        return primary();
    }

    private Condition primary() {
        if (accept("(")) {
            Condition c = or();
            expect(")");
            return c;
        }
        Token t = peek();
        if (t.kind == Kind.WORD && peekAt(1).text.equals("(")) {
            if (CONDITION_FUNCTIONS.contains(t.text)) {
                return function();
            }
            if (!t.text.equals("size")) {
                boolean update = t.text.equals("if_not_exists") || t.text.equals("list_append");
                throw Errors.validation(prefix + (update ? "The function is not allowed to be used this way in an "
                        + "expression; function: " : "Invalid function name; function: ") + t.text);
            }
        }
        Operand left = conditionOperand();
        Token op = next();
        if (op.kind == Kind.WORD && op.text.equalsIgnoreCase("BETWEEN")) {
            Operand low = conditionOperand();
            if (!acceptWord("AND")) {
                throw syntax(peek());
            }
            Operand high = conditionOperand();
            checkBounds(low, high);
            return new Ast.Between(left, low, high);
        }
        if (op.kind == Kind.WORD && op.text.equalsIgnoreCase("IN")) {
            expect("(");
            List<Operand> candidates = new ArrayList<>();
            do {
                candidates.add(conditionOperand());
            } while (accept(","));
            expect(")");
            if (candidates.size() > 100) {
                throw Errors.validation(prefix + "The IN operator is provided with too many operands; number of "
                        + "operands: " + candidates.size());
            }
            return new Ast.In(left, candidates);
        }
        if (op.kind != Kind.PUNCT || !COMPARISONS.contains(op.text)) {
            throw syntax(op);
        }
        return new Ast.Compare(op.text, left, conditionOperand());
    }

    private void checkBounds(Operand low, Operand high) {
        if (low instanceof Literal l && high instanceof Literal h && Values.comparable(l.value(), h.value())
                && Values.compare(l.value(), h.value()) > 0) {
            throw Errors.validation(prefix + "The BETWEEN operator requires upper bound to be greater than or equal to"
                    + " lower bound; lower bound operand: AttributeValue: {" + Values.type(l.value()) + ":"
                    + scalar(l.value()) + "}, upper bound operand: AttributeValue: {" + Values.type(h.value()) + ":"
                    + scalar(h.value()) + "}");
        }
    }

    private static String scalar(AttributeValue v) {
        return v.s() != null ? v.s() : v.n() != null ? v.n() : "0x" + v.b().asByteBuffer();
    }

    private Operand conditionOperand() {
        Token t = peek();
        if (t.kind == Kind.WORD && peekAt(1).text.equals("(")) {
            next();
            expect("(");
            if (!t.text.equals("size")) {
                throw Errors.validation(prefix + (CONDITION_FUNCTIONS.contains(t.text)
                        ? "The function is not allowed to be used this way in an expression; function: "
                        : "Invalid function name; function: ") + t.text);
            }
            Path p = path();
            expect(")");
            return new Ast.Size(p);
        }
        return plainOperand();
    }

    private Condition function() {
        String fn = next().text;
        expect("(");
        Token first = peek();
        if (first.kind == Kind.VALUE) {
            throw Errors.validation(prefix + "Operator or function requires a document path; operator or function: "
                    + fn);
        }
        Path p = path();
        Operand arg = null;
        if (!fn.equals("attribute_exists") && !fn.equals("attribute_not_exists")) {
            expect(",");
            arg = conditionOperand();
            checkArgument(fn, arg);
        }
        expect(")");
        return new Ast.Function(fn, p, arg);
    }

    private void checkArgument(String fn, Operand arg) {
        if (!(arg instanceof Literal l)) {
            if (fn.equals("attribute_type")) {
                throw Errors.validation(prefix + "Incorrect operand type for operator or function; operator or "
                        + "function: attribute_type, operand type: M");
            }
            return;
        }
        String type = Values.type(l.value());
        if (fn.equals("attribute_type") && (!type.equals("S") || !TYPES.contains(l.value().s()))) {
            throw Errors.validation(prefix + "Invalid attribute type name found; type: "
                    + (type.equals("S") ? l.value().s() : type) + ", valid types: { B,BOOL,BS,L,M,N,NS,NULL,S,SS }");
        }
        if (fn.equals("begins_with") && !type.equals("S") && !type.equals("B")) {
            throw Errors.validation(prefix + "Incorrect operand type for operator or function; operator or function: "
                    + "begins_with, operand type: " + type);
        }
    }

    private Path path() {
        List<Path.Element> elements = new ArrayList<>();
        elements.add(new Path.Name(pathName()));
        while (true) {
            if (accept(".")) {
                elements.add(new Path.Name(pathName()));
            } else if (accept("[")) {
                Token n = next();
                if (n.kind != Kind.INDEX) {
                    throw syntax(n);
                }
                long index;
                try {
                    index = Long.parseLong(n.text);
                } catch (NumberFormatException e) {
                    index = Long.MAX_VALUE;
                }
                if (index > Integer.MAX_VALUE) {
                    throw Errors.validation(prefix + "List index is out of range; index: " + n.text);
                }
                elements.add(new Path.Index((int) index));
                expect("]");
            } else {
                return new Path(List.copyOf(elements));
            }
        }
    }

    private String pathName() {
        Token t = next();
        if (t.kind == Kind.NAME) {
            return names.name(t.text, prefix);
        }
        if (t.kind != Kind.WORD) {
            throw syntax(t);
        }
        if (Names.reserved(t.text)) {
            throw Errors.validation(prefix + "Attribute name is a reserved keyword; reserved keyword: " + t.text);
        }
        return t.text;
    }

    private DynamoDbException syntax(Token t) {
        String token = t.kind == Kind.END ? "<EOF>" : t.text;
        int from = Math.max(0, t.start - 10);
        int to = Math.min(source.length(), t.start + Math.max(1, t.text.length()) + 10);
        return Errors.validation(prefix + "Syntax error; token: \"" + token + "\", near: \""
                + source.substring(from, to).strip() + "\"");
    }

    private Token peek() {
        return tokens.get(pos);
    }

    private Token peekAt(int ahead) {
        return tokens.get(Math.min(pos + ahead, tokens.size() - 1));
    }

    private Token next() {
        Token t = tokens.get(pos);
        if (t.kind != Kind.END) {
            pos++;
        }
        return t;
    }

    private boolean atEnd() {
        return peek().kind == Kind.END;
    }

    private boolean peekIs(String punct) {
        return peek().kind == Kind.PUNCT && peek().text.equals(punct);
    }

    private boolean accept(String punct) {
        if (peekIs(punct)) {
            pos++;
            return true;
        }
        return false;
    }

    private boolean acceptWord(String word) {
        if (peek().kind == Kind.WORD && peek().text.equalsIgnoreCase(word)) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(String punct) {
        if (!accept(punct)) {
            throw syntax(peek());
        }
    }

    private void end() {
        if (!atEnd()) {
            throw syntax(peek());
        }
    }

    /** The kinds of token. */
    enum Kind { WORD, NAME, VALUE, INDEX, PUNCT, END }

    /** A token and where it starts. */
    record Token(Kind kind, String text, int start) {
    }
}
