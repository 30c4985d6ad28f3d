package io.lifeline.local.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A first deploy that asks only what matters. {@code sam deploy --guided} as the SAM CLI asks it (its
 * {@code guided_context.py}: the stack name and Region, {@code Parameter NAME} for each parameter in the order of the
 * template's {@code Parameters} section, the change-set, IAM and rollback questions, one "has no authentication"
 * question per unauthenticated route or Function URL, then where to save), derived from template.yaml: docs/deploy.md
 * lists those questions in that order with SAM's defaults; every default passes the parameter's own constraints; the
 * two NoEcho parameters (asked with no default) take {@code none}; no resource draws the authentication question,
 * whose Enter aborts. And docs/samconfig.example.toml: a first deploy with nothing on the command line, every value a
 * parameter accepts, no secret, no change-set question, and comments that point at pages that exist.
 */
@Tag("unit")
class GuidedDeployTest {
    private static final Pattern ROW = Pattern.compile("^\\| (\\d+) \\| `([^`]+)`");
    private static final Pattern QUESTION = Pattern.compile("^(.*?)(?: \\[(.*)\\])?$");

    static JsonNode template;
    static Path root;

    @BeforeAll
    static void read() throws Exception {
        template = TestStack.template().tree();
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("template.yaml")))) {
            p = p.getParent();
        }
        assertTrue(p != null, "the repository root is above " + Path.of("").toAbsolutePath());
        root = p;
    }

    /** The template's parameters in the order SAM asks them: the Parameters section's own order. */
    static Map<String, JsonNode> parameters() {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = template.path("Parameters").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /** SAM's questions, each as it prints it (the prompt, and its default in brackets where it offers one). */
    static List<String> samQuestions() {
        List<String> q = new ArrayList<>(List.of("Stack Name", "AWS Region"));
        parameters().forEach((name, p) -> q.add(p.path("NoEcho").asBoolean(false) ? "Parameter " + name
                : "Parameter " + name + " [" + p.path("Default").asText("") + "]"));
        q.addAll(List.of("Confirm changes before deploy", "Allow SAM CLI IAM role creation", "Disable rollback"));
        q.addAll(unauthenticated().stream().map(r -> r + " has no authentication. Is this okay?").toList());
        q.addAll(List.of("Save arguments to configuration file", "SAM configuration file",
                "SAM configuration environment"));
        return q;
    }

    /** docs/deploy.md's table, in its order: the question and the answer it gives. */
    static Map<String, String> documentedQuestions() throws Exception {
        Map<String, String> rows = new LinkedHashMap<>();
        int expected = 1;
        for (String line : Files.readAllLines(root.resolve("docs/deploy.md"))) {
            Matcher m = ROW.matcher(line);
            if (m.find()) {
                assertEquals(expected++, Integer.parseInt(m.group(1)), "numbered in order: " + line);
                rows.put(m.group(2), line.substring(line.lastIndexOf('|', line.length() - 2) + 1).trim());
            }
        }
        return rows;
    }

    /**
     * The resources SAM's guided deploy asks "has no authentication" about (its {@code auth_utils}): a function with
     * an HttpApi or Api event that has no {@code Auth} of its own and whose API has none, or a
     * {@code FunctionUrlConfig} whose {@code AuthType} is NONE.
     */
    static List<String> unauthenticated() {
        List<String> out = new ArrayList<>();
        JsonNode resources = template.path("Resources");
        for (Iterator<Map.Entry<String, JsonNode>> it = resources.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> r = it.next();
            if (!"AWS::Serverless::Function".equals(r.getValue().path("Type").asText())) {
                continue;
            }
            JsonNode props = r.getValue().path("Properties");
            for (JsonNode event : iterable(props.path("Events"))) {
                String type = event.path("Type").asText();
                if (!type.equals("HttpApi") && !type.equals("Api")) {
                    continue;
                }
                JsonNode ep = event.path("Properties");
                String api = ep.path(type.equals("HttpApi") ? "ApiId" : "RestApiId").path("Ref").asText();
                boolean apiAuth = !api.isEmpty() && resources.path(api).path("Properties").has("Auth");
                if (!ep.has("Auth") && !apiAuth) {
                    out.add(r.getKey());
                }
            }
            if ("NONE".equals(props.at("/FunctionUrlConfig/AuthType").asText())) {
                out.add(r.getKey() + " Function Url");
            }
        }
        return out;
    }

    static Iterable<JsonNode> iterable(JsonNode object) {
        List<JsonNode> out = new ArrayList<>();
        object.elements().forEachRemaining(out::add);
        return out;
    }

    @Test
    void deployMd_listsEveryGuidedQuestion_inSamsOrder_withSamsDefaults() throws Exception {
        List<String> sam = samQuestions();
        List<String> documented = new ArrayList<>();
        for (String q : documentedQuestions().keySet()) {
            Matcher m = QUESTION.matcher(q);
            assertTrue(m.matches(), q);
            // SAM's own questions are listed with the default it shows; only a parameter's default is the template's.
            documented.add(q.startsWith("Parameter ") ? q : m.group(1));
        }
        List<String> expected = sam.stream().map(q -> q.startsWith("Parameter ") ? q : QUESTION.matcher(q)
                .replaceAll("$1")).toList();
        assertEquals(expected, documented, "docs/deploy.md's table against the template's parameters");
        System.out.printf("guided deploy: %d questions (%d parameters), in SAM's order:%n", sam.size(),
                parameters().size());
        for (int i = 0; i < sam.size(); i++) {
            System.out.printf("  %2d  %s%n", i + 1, sam.get(i));
        }
        String page = Files.readString(root.resolve("docs/deploy.md"));
        assertTrue(page.contains("That is " + sam.size() + " questions."), "the page's count is " + sam.size());
    }

    @Test
    void everyGuidedDefault_isDeployable_andNoQuestionAborts_onEnter() throws Exception {
        assertEquals(List.of(), unauthenticated(), "resources that draw \"has no authentication\" (Enter aborts)");
        Map<String, String> answers = documentedQuestions();
        parameters().forEach((name, p) -> {
            if (p.path("NoEcho").asBoolean(false)) {
                // Asked with no default, and asked again on an empty answer: the page says to type none.
                assertTrue(accepts(p, "none"), name + " accepts none");
                assertTrue(answers.get("Parameter " + name).startsWith("`none`"), name + ": " + answers);
            } else {
                assertTrue(p.has("Default"), name + " has a default (Enter)");
                assertTrue(accepts(p, p.path("Default").asText()), name + "'s default " + p.path("Default"));
            }
        });
        assertTrue(template.at("/Conditions/HasSlack").toString().contains("\"none\""), "none means no Slack");
        assertTrue(template.at("/Conditions/HasPagerDuty").toString().contains("\"none\""), "none: no PagerDuty");
    }

    /** The value passes the parameter's AllowedValues, AllowedPattern, MinValue and MaxValue, as CloudFormation checks. */
    static boolean accepts(JsonNode p, String value) {
        if (p.has("AllowedValues")) {
            boolean listed = false;
            for (JsonNode v : p.path("AllowedValues")) {
                listed |= v.asText().equals(value);
            }
            if (!listed) {
                return false;
            }
        }
        if (p.has("AllowedPattern") && !Pattern.compile(p.path("AllowedPattern").asText()).matcher(value).matches()) {
            return false;
        }
        if ("Number".equals(p.path("Type").asText())) {
            double n = Double.parseDouble(value);
            return !(p.has("MinValue") && n < p.path("MinValue").asDouble())
                    && !(p.has("MaxValue") && n > p.path("MaxValue").asDouble());
        }
        return true;
    }

    @Test
    void samconfigExample_isAFirstDeployThatKeepsItsParameters_withCommentsThatPointAtPagesThatExist()
            throws Exception {
        String example = Files.readString(root.resolve("docs/samconfig.example.toml"));
        Matcher overrides = Pattern.compile("(?m)^parameter_overrides = \"([^\"]*)\"$").matcher(example);
        assertTrue(overrides.find(), example);
        Map<String, JsonNode> params = parameters();
        List<String> named = new ArrayList<>();
        for (String pair : overrides.group(1).split(" ")) {
            String name = pair.substring(0, pair.indexOf('='));
            JsonNode p = params.get(name);
            assertTrue(p != null, name + " is a parameter");
            assertFalse(p.path("NoEcho").asBoolean(false), name + ": no secret in the file");
            assertTrue(accepts(p, pair.substring(pair.indexOf('=') + 1)), pair);
            named.add(name);
        }
        assertEquals(List.of("ConcurrencyProfile", "AlarmSet", "AlertEmail"), named);
        assertTrue(example.contains("\nconfirm_changeset = false\n"), "no \"Deploy this changeset? [y/N]\"");
        // The commands the file's comments give: a first deploy passes no --parameter-overrides.
        assertTrue(example.contains("run a plain `sam deploy`"), example);

        // Every page a comment names exists, and so does every section it names on that page.
        Matcher ref = Pattern.compile("((?:docs/)?[\\w.-]+\\.md)(?:, \"([^\"]+)\")?").matcher(example);
        int refs = 0;
        while (ref.find()) {
            Path page = root.resolve(ref.group(1));
            assertTrue(Files.exists(page), ref.group() + ": no such page");
            if (ref.group(2) != null) {
                String heading = ref.group(2);
                assertTrue(Files.readAllLines(page).stream().anyMatch(l -> l.matches("#+ " + Pattern.quote(heading))),
                        ref.group() + ": no such section");
            }
            refs++;
        }
        assertTrue(refs >= 3, "the comments point at pages: " + refs);
        assertFalse(example.contains("README"), "the README has no deploy sections; docs/deploy.md has them");
    }
}
