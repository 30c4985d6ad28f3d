package io.lifeline.local.template;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * CloudFormation's intrinsic functions as Lifeline Local evaluates them over template.yaml, for a set of parameter
 * overrides: conditions ({@code Fn::Equals}, {@code Fn::Not}, {@code Fn::And}, {@code Fn::Or}, {@code Condition}),
 * {@code Fn::If}, and values ({@code Ref} to a parameter, a pseudo parameter or a resource's local name,
 * {@code Fn::FindInMap}, {@code Fn::Sub}). What it cannot evaluate it refuses, naming it, rather than guess.
 */
final class Intrinsics {
    private final JsonNode root;

    Intrinsics(JsonNode root) {
        this.root = root;
    }

    /** The value an {@code Fn::If} picks for these parameters, nested ones too; any other value as it is. */
    JsonNode chosen(JsonNode v, Map<String, String> parameters) {
        while (v.has("Fn::If")) {
            JsonNode branches = v.get("Fn::If");
            v = condition(branches.get(0).asText(), parameters) ? branches.get(1) : branches.get(2);
        }
        return v;
    }

    boolean condition(String name, Map<String, String> parameters) {
        return evaluate(root.path("Conditions").path(name), parameters);
    }

    private boolean evaluate(JsonNode c, Map<String, String> parameters) {
        if (c.has("Fn::Not")) {
            return !evaluate(c.get("Fn::Not").get(0), parameters);
        }
        if (c.has("Fn::Equals")) {
            JsonNode pair = c.get("Fn::Equals");
            return resolve(pair.get(0), parameters, Map.of()).equals(resolve(pair.get(1), parameters, Map.of()));
        }
        if (c.has("Fn::And") || c.has("Fn::Or")) {
            boolean and = c.has("Fn::And");
            for (JsonNode part : c.get(and ? "Fn::And" : "Fn::Or")) {
                if (evaluate(part, parameters) != and) {
                    return !and;
                }
            }
            return and;
        }
        if (c.has("Condition")) {
            return condition(c.get("Condition").asText(), parameters);
        }
        throw new IllegalStateException("Local cannot evaluate the condition " + c);
    }

    /**
     * A value as Local sees it: a literal stays; {@code !Ref} to a parameter is its override or default, to
     * a resource its local name; {@code !Sub} has its {@code ${Name}} parts replaced likewise; {@code !If} is the
     * branch its condition picks.
     */
    String resolve(JsonNode value, Map<String, String> parameters, Map<String, String> resourceNames) {
        if (value.isValueNode()) {
            return value.asText();
        }
        if (value.has("Ref")) {
            return resolveName(value.get("Ref").asText(), parameters, resourceNames);
        }
        if (value.has("Fn::FindInMap")) {
            JsonNode at = value.get("Fn::FindInMap");
            return root.path("Mappings").path(resolve(at.get(0), parameters, resourceNames))
                    .path(resolve(at.get(1), parameters, resourceNames))
                    .path(resolve(at.get(2), parameters, resourceNames)).asText();
        }
        if (value.has("Fn::If")) {
            // The branch the named condition picks, as CloudFormation would (an environment variable sized by FleetSize
            // unless a parameter overrides it).
            JsonNode branches = value.get("Fn::If");
            return resolve(condition(branches.get(0).asText(), parameters) ? branches.get(1) : branches.get(2),
                    parameters, resourceNames);
        }
        if (value.has("Fn::Sub") && value.get("Fn::Sub").isTextual()) {
            Matcher m = Pattern.compile("\\$\\{([^}]+)}")
                    .matcher(value.get("Fn::Sub").asText());
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(out, Matcher.quoteReplacement(
                        resolveName(m.group(1), parameters, resourceNames)));
            }
            return m.appendTail(out).toString();
        }
        throw new IllegalStateException("Local cannot resolve " + value);
    }

    private String resolveName(String name, Map<String, String> parameters, Map<String, String> resourceNames) {
        if (parameters.containsKey(name)) {
            return parameters.get(name);
        }
        JsonNode parameter = root.path("Parameters").path(name);
        if (!parameter.isMissingNode()) {
            return parameter.path("Default").asText();
        }
        if (name.startsWith("AWS::")) {
            return switch (name) {
                case "AWS::Region" -> "us-east-1";
                case "AWS::AccountId" -> "000000000000";
                case "AWS::Partition" -> "aws";
                case "AWS::URLSuffix" -> "amazonaws.com";
                default -> "lifeline-local";
            };
        }
        String base = name.contains(".") ? name.substring(0, name.indexOf('.')) : name;
        if (root.path("Resources").has(base)) {
            String local = resourceNames.get(name.contains(".") && resourceNames.containsKey(name) ? name : base);
            if (local == null) {
                throw new IllegalStateException("No local name for resource " + base);
            }
            return local;
        }
        throw new IllegalStateException("Unknown name " + name + " in template.yaml");
    }
}
