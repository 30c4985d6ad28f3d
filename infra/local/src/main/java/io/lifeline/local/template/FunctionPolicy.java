package io.lifeline.local.template;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A function's IAM policy as template.yaml writes it (the inline {@code Statement}s of its {@code Policies}),
 * evaluated as IAM does for an identity policy: a call is allowed when some Allow statement matches its
 * action and resource and no Deny statement does. Resources are kept in the template's own terms: a
 * reference to a resource ({@code !GetAtt AgentsTable.Arn}, {@code !Ref ReviveStateMachine}) is its logical id,
 * and {@code !Sub '${AgentsTable.Arn}/index/*'} is {@code AgentsTable/index/*}; a call's resource is named the
 * same way (see {@link PolicyGuard}). Wildcards {@code *} and {@code ?} match as in IAM; actions match without
 * regard to case.
 */
public final class FunctionPolicy {
    /** One statement: Allow or Deny of actions on resources, as glob patterns. */
    public record Statement(boolean allow, List<String> actions, List<String> resources) {
    }

    private final String function;
    private final List<Statement> statements;
    /** Answers already worked out, by action and resource: a function asks the same few questions all day. */
    private final Map<String, Boolean> answers = new ConcurrentHashMap<>();

    public FunctionPolicy(String function, List<Statement> statements) {
        this.function = function;
        this.statements = List.copyOf(statements);
    }

    /**
     * Reads a function's {@code Policies} (null or missing: no statements, so every call is denied). A SAM
     * policy template or a managed policy name is refused: Local could not know what it allows.
     */
    public static FunctionPolicy of(String function, JsonNode policies) {
        List<Statement> out = new ArrayList<>();
        if (policies != null && !policies.isMissingNode() && !policies.isNull()) {
            if (!policies.isArray()) {
                throw new IllegalStateException(function + ": Policies must be a list of inline statements");
            }
            for (JsonNode policy : policies) {
                if (!policy.has("Statement") || policy.size() != 1) {
                    throw new IllegalStateException(function + ": Local checks inline policy statements only, not "
                            + policy + " (a SAM policy template or managed policy would not be enforced)");
                }
                for (JsonNode s : list(policy.get("Statement"))) {
                    String effect = s.path("Effect").asText();
                    if (!effect.equals("Allow") && !effect.equals("Deny")) {
                        throw new IllegalStateException(function + ": statement without Allow or Deny: " + s);
                    }
                    if (s.has("NotAction") || s.has("NotResource") || s.has("Condition")) {
                        throw new IllegalStateException(function + ": Local does not evaluate NotAction, NotResource "
                                + "or Condition: " + s);
                    }
                    List<String> actions = new ArrayList<>();
                    list(s.path("Action")).forEach(a -> actions.add(a.asText()));
                    List<String> resources = new ArrayList<>();
                    list(s.path("Resource")).forEach(r -> resources.add(resource(function, r)));
                    out.add(new Statement(effect.equals("Allow"), actions, resources));
                }
            }
        }
        return new FunctionPolicy(function, out);
    }

    private static List<JsonNode> list(JsonNode node) {
        List<JsonNode> out = new ArrayList<>();
        if (node.isArray()) {
            node.forEach(out::add);
        } else if (!node.isMissingNode()) {
            out.add(node);
        }
        return out;
    }

    private static final Pattern SUB_REF = Pattern.compile("\\$\\{([A-Za-z0-9]+)(\\.Arn)?}");

    /** A policy resource in the template's terms: a logical id, a logical id with a suffix, or a literal. */
    static String resource(String function, JsonNode r) {
        if (r.isTextual()) {
            return r.asText();
        }
        if (r.has("Ref") || r.has("Fn::GetAtt")) {
            return SamTemplate.referencedResource(r);
        }
        if (r.has("Fn::Sub") && r.get("Fn::Sub").isTextual()) {
            Matcher m = SUB_REF.matcher(r.get("Fn::Sub").asText());
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(out, Matcher.quoteReplacement(m.group(1)));
            }
            return m.appendTail(out).toString();
        }
        throw new IllegalStateException(function + ": Local cannot read the policy resource " + r);
    }

    /** Whether IAM would let this function call {@code action} (such as {@code dynamodb:GetItem}) on {@code resource}. */
    public boolean allows(String action, String resource) {
        return answers.computeIfAbsent(action + " " + resource, k -> evaluate(action, resource));
    }

    private boolean evaluate(String action, String resource) {
        boolean allowed = false;
        for (Statement s : statements) {
            boolean matches = s.actions().stream().anyMatch(a -> glob(a.toLowerCase(Locale.ROOT))
                    .matcher(action.toLowerCase(Locale.ROOT)).matches())
                    && s.resources().stream().anyMatch(r -> glob(r).matcher(resource).matches());
            if (matches && !s.allow()) {
                return false;
            }
            allowed |= matches;
        }
        return allowed;
    }

    private static Pattern glob(String pattern) {
        StringBuilder regex = new StringBuilder();
        for (char c : pattern.toCharArray()) {
            regex.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
        }
        return Pattern.compile(regex.toString());
    }

    public String function() {
        return function;
    }

    /** The statements, in the template's order (what a check of unused grants compares calls against). */
    public List<Statement> statements() {
        return statements;
    }

    @Override
    public String toString() {
        return function + " " + statements;
    }
}
