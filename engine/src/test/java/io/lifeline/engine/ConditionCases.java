package io.lifeline.engine;

import static io.lifeline.engine.Cases.b;
import static io.lifeline.engine.Cases.l;
import static io.lifeline.engine.Cases.m;
import static io.lifeline.engine.Cases.map;
import static io.lifeline.engine.Cases.n;
import static io.lifeline.engine.Cases.names;
import static io.lifeline.engine.Cases.s;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/** Every function and operator of the condition grammar, on every type it takes. */
interface ConditionCases extends Cases {
    String OPERATORS = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html";

    private String sample() {
        String t = table();
        db().putItem(r -> r.tableName(t).item(map("pk", "a", "sk", "1", "str", "hello", "num", n("10"),
                "bin", b(1, 2, 3), "ss", AttributeValue.fromSs(List.of("x", "y")), "lst", l(s("p"), n("2")),
                "mp", m("k", m("deep", n("7"))), "blank", "", "bool", AttributeValue.fromBool(false),
                "nul", AttributeValue.fromNul(true), "Date", "2026-11-28")));
        return t;
    }

    private boolean holds(String t, String condition, Map<String, String> names, Object... values) {
        Map<String, AttributeValue> v = new LinkedHashMap<>(map(values));
        v.put(":probe", n("1"));
        try {
            db().updateItem(r -> r.tableName(t).key(map("pk", "a", "sk", "1")).updateExpression("SET probe = :probe")
                    .conditionExpression(condition).expressionAttributeNames(names).expressionAttributeValues(v));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    @Test
    default void comparisonsOnEveryOrderedType() {
        String t = sample();
        assertTrue(holds(t, "num = :v", null, ":v", n("10.0")));
        assertTrue(holds(t, "num <> :v", null, ":v", n("11")));
        assertTrue(holds(t, "num < :v AND num <= :w", null, ":v", n("11"), ":w", n("10")));
        assertFalse(holds(t, "num > :v", null, ":v", n("10")));
        assertTrue(holds(t, "str >= :v", null, ":v", "hello"));
        assertTrue(holds(t, "str < :v", null, ":v", "help"));
        assertTrue(holds(t, "bin > :v", null, ":v", b(1, 2)));
        assertFalse(holds(t, "num = :v", null, ":v", "10"), "different types are never equal");
        awsDocumented(OPERATORS + " (a comparison of different types is false; moto fails with HTTP 500)",
                () -> assertFalse(holds(t, "num < :v", null, ":v", "99"), "different types are not ordered"));
        assertTrue(holds(t, "absent <> :v", null, ":v", "x"), "a missing attribute is not equal");
        assertFalse(holds(t, "absent < :v", null, ":v", "x"));
        assertTrue(holds(t, "ss = :v", null, ":v", AttributeValue.fromSs(List.of("y", "x"))), "sets by content");
        assertTrue(holds(t, "mp.k.deep = :v", null, ":v", n("7")));
        assertTrue(holds(t, "lst[1] = :v", null, ":v", n("2")));
        assertTrue(holds(t, "#d = :v", names("#d", "Date"), ":v", "2026-11-28"));
    }

    @Test
    default void betweenInAndLogic() {
        String t = sample();
        assertTrue(holds(t, "num BETWEEN :a AND :b", null, ":a", n("10"), ":b", n("12")));
        assertFalse(holds(t, "num BETWEEN :a AND :b", null, ":a", n("11"), ":b", n("12")));
        assertTrue(holds(t, "str BETWEEN :a AND :b", null, ":a", "h", ":b", "i"));
        assertTrue(holds(t, "num IN (:a, :b, :c)", null, ":a", n("1"), ":b", n("10"), ":c", "10"));
        assertFalse(holds(t, "num IN (:a)", null, ":a", "10"));
        assertTrue(holds(t, "NOT num = :a", null, ":a", n("1")));
        assertTrue(holds(t, "num = :a OR num = :b AND num = :c", null, ":a", n("10"), ":b", n("1"), ":c", n("2")),
                "AND binds tighter than OR");
        assertFalse(holds(t, "(num = :a OR num = :b) AND num = :c", null, ":a", n("10"), ":b", n("1"), ":c", n("2")));
        awsDocumented("AWS answers \"The BETWEEN operator requires upper bound to be greater than or equal to lower "
                + "bound\" (ValidationException)", () -> {
                    DynamoDbException e = assertThrows(DynamoDbException.class, () -> holds(t,
                            "num BETWEEN :a AND :b", null, ":a", n("12"), ":b", n("10")));
                    assertEquals("ValidationException", e.awsErrorDetails().errorCode());
                });
    }

    @Test
    default void existenceAndTypeFunctions() {
        String t = sample();
        assertTrue(holds(t, "attribute_exists(mp.k.deep) AND attribute_not_exists(mp.k.nothing)", null));
        assertTrue(holds(t, "attribute_exists(nul) AND attribute_exists(blank)", null));
        assertTrue(holds(t, "attribute_type(num, :n) AND attribute_type(ss, :ss) AND attribute_type(nul, :nul)", null,
                ":n", "N", ":ss", "SS", ":nul", "NULL"));
        assertFalse(holds(t, "attribute_type(num, :s)", null, ":s", "S"));
        awsDocumented(OPERATORS + " (attribute_type's type is one of S SS N NS B BS BOOL NULL L M)",
                () -> assertThrows(DynamoDbException.class, () -> holds(t, "attribute_type(num, :x)", null,
                        ":x", "NUMBER")));
    }

    @Test
    default void beginsWithAndContainsOnStringsBinariesSetsAndLists() {
        String t = sample();
        assertTrue(holds(t, "begins_with(str, :p)", null, ":p", "hel"));
        assertFalse(holds(t, "begins_with(str, :p)", null, ":p", "el"));
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Condition.html "
                + "(BEGINS_WITH takes a String or a Binary)", () -> {
                    assertTrue(holds(t, "begins_with(bin, :p)", null, ":p", b(1, 2)));
                    assertFalse(holds(t, "begins_with(bin, :p)", null, ":p", b(2)));
                });
        assertTrue(holds(t, "contains(str, :p)", null, ":p", "ell"));
        assertTrue(holds(t, "contains(ss, :p)", null, ":p", "y"));
        assertFalse(holds(t, "contains(ss, :p)", null, ":p", "z"));
        assertTrue(holds(t, "contains(lst, :p)", null, ":p", n("2")));
        assertFalse(holds(t, "begins_with(num, :p)", null, ":p", "1"), "begins_with of a number is false");
        awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Condition.html "
                + "(BEGINS_WITH takes a String or a Binary, not a Number)", () -> assertThrows(DynamoDbException.class,
                        () -> holds(t, "begins_with(str, :p)", null, ":p", n("1"))));
    }

    @Test
    default void sizeOfEachType() {
        String t = sample();
        assertTrue(holds(t, "size(str) = :five", null, ":five", n("5")));
        assertTrue(holds(t, "size(bin) = :three", null, ":three", n("3")));
        assertTrue(holds(t, "size(ss) = :two AND size(lst) = :two", null, ":two", n("2")));
        assertTrue(holds(t, "size(mp) = :one", null, ":one", n("1")));
        assertTrue(holds(t, "size(blank) = :zero", null, ":zero", n("0")));
        awsDocumented(OPERATORS + " (size of a missing attribute: the condition is false; moto fails with HTTP 500)",
                () -> assertFalse(holds(t, "size(absent) >= :zero", null, ":zero", n("0"))));
    }

    @Test
    default void expressionErrorsAreValidationExceptions() {
        String t = sample();
        for (String bad : List.of("num = ", "num == :v", "foo(num)", "num = :undefined", "#undefined = :v",
                "num = :v AND", "(num = :v")) {
            awsDocumented("https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html "
                    + "(a malformed expression is a ValidationException, HTTP 400): " + bad, () -> {
                        DynamoDbException e = assertThrows(DynamoDbException.class,
                                () -> holds(t, bad, null, ":v", n("1")), bad);
                        assertEquals("ValidationException", e.awsErrorDetails().errorCode(), bad);
                    });
        }
        DynamoDbException unused = assertThrows(DynamoDbException.class, () -> holds(t, "num = :v", null,
                ":v", n("1"), ":spare", n("2")));
        assertTrue(unused.awsErrorDetails().errorMessage().contains("unused"), unused.getMessage());
    }
}
