package io.lifeline.local.template;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.store.dynamo.TableDeclarations;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.AbstractConstruct;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;

/**
 * template.yaml, read for what Lifeline Local and the tests need: the table, the functions with their
 * handlers, environment and events, and the HTTP API's authorizer. CloudFormation tags are dropped by the
 * YAML reader, so {@code !Ref X} reads as {@code X}; {@link Intrinsics#resolve} maps such names to local values.
 */
public final class SamTemplate {
    /**
     * An HTTP route: method and path exactly as the template writes them. {@code publicRoute}: the event
     * says {@code Auth: { Authorizer: NONE }}, SAM's way to leave one route of an HttpApi without the
     * default authorizer, so the gateway invokes it with no Authorization header.
     */
    public record Route(String method, String path, boolean publicRoute) {
        public Route(String method, String path) {
            this(method, path, false);
        }

        public String routeKey() {
            return method + " " + path;
        }
    }

    /**
     * A function of the template. {@code handlerClass} is the class name without {@code ::method};
     * {@code handlerMethod} is the method the Handler names (null when it names a class only).
     */
    public record Function(String logicalId, String handlerClass, Map<String, String> environment,
                           List<Route> routes, boolean readsTableStream, List<String> streamFilters,
                           FunctionPolicy policy, String handlerMethod) {
    }

    /**
     * Where a rule sends a matching event: the alerts topic, an HTTP endpoint (API destination), or a state
     * machine, whose input is shaped by the target's InputTransformer (paths map and template; null for
     * the whole event). {@code retry} is the target's RetryPolicy (EventBridge's defaults when it has none),
     * {@code deadLetterQueue} the logical id of its DeadLetterConfig queue (null: none); an API destination's
     * connection adds {@code headers} (its API key) and {@code bodyParameters} to every request.
     */
    public record Target(String id, String topic, String endpoint, String stateMachine,
                         Map<String, String> inputPaths, String inputTemplate, RetryPolicy retry,
                         String deadLetterQueue, Map<String, String> headers, Map<String, String> bodyParameters) {
        Target(String id, String topic, String endpoint) {
            this(id, topic, endpoint, null, null, null, RetryPolicy.DEFAULT, null, Map.of(), Map.of());
        }

        /** Where the event goes, without how (retries, queue, credentials). */
        public String destination() {
            return topic != null ? "topic " + topic : stateMachine != null ? "state machine " + stateMachine
                    : "endpoint " + endpoint;
        }
    }

    /**
     * A target's RetryPolicy: EventBridge gives up after {@code maximumRetryAttempts} retries or once the event is
     * {@code maximumEventAge} old, whichever comes first. Without one: 185 retries, 24 hours.
     */
    public record RetryPolicy(int maximumRetryAttempts, Duration maximumEventAge) {
        public static final RetryPolicy DEFAULT = new RetryPolicy(185, Duration.ofHours(24));
    }

    /** A state machine: its logical id, its ASL definition and the substitutions the template gives it. */
    public record StateMachine(String logicalId, String definition, Map<String, String> substitutions) {
    }

    /** An EventBridge rule: its pattern (JSON) and targets. */
    public record Rule(String logicalId, String eventPattern, List<Target> targets) {
    }

    /** A function's Schedule event. */
    public record Schedule(String functionId, String expression) {
    }

    /** A function's SQS event: the queue (its logical id) whose messages invoke it, at most {@code batchSize} a time. */
    public record QueueEvent(String functionId, String queueId, int batchSize) {
    }

    private final JsonNode root;
    /** Conditions, Fn::If and the values of Ref, FindInMap and Sub, evaluated over this template. */
    private final Intrinsics intrinsics;
    /** The template's directory, for DefinitionUri; null for the template bundled on the classpath. */
    private final Path baseDir;

    private SamTemplate(JsonNode root, Path baseDir) {
        this.root = root;
        this.intrinsics = new Intrinsics(root);
        this.baseDir = baseDir;
    }

    public static SamTemplate read(Path path) throws IOException {
        try (InputStream in = Files.newInputStream(path)) {
            return new SamTemplate(parse(in), path.toAbsolutePath().getParent());
        }
    }

    /**
     * Reads the YAML with CloudFormation's short-form tags kept as their long form ({@code !Ref X} becomes
     * {@code {"Ref": "X"}}, {@code !Not [...]} becomes {@code {"Fn::Not": [...]}}), so references and
     * conditions can be resolved rather than guessed.
     */
    private static JsonNode parse(InputStream in) {
        LoaderOptions options = new LoaderOptions();
        Yaml yaml = new Yaml(new CloudFormationConstructor(options));
        Object tree = yaml.load(in);
        return new ObjectMapper().valueToTree(tree);
    }

    /** Turns {@code !Ref}, {@code !GetAtt}, {@code !Sub}, {@code !Not}... into CloudFormation's long form. */
    private static final class CloudFormationConstructor extends SafeConstructor {
        CloudFormationConstructor(LoaderOptions options) {
            super(options);
            for (String fn : List.of("Ref", "GetAtt", "Sub", "Join", "Not", "Equals", "And", "Or", "If", "Select",
                    "Split", "FindInMap", "ImportValue", "Base64", "GetAZs", "Condition")) {
                String key = fn.equals("Ref") || fn.equals("Condition") ? fn : "Fn::" + fn;
                Tag tag = new Tag("!" + fn);
                this.yamlConstructors.put(tag, new AbstractConstruct() {
                    @Override
                    public Object construct(Node node) {
                        Object value;
                        if (node instanceof ScalarNode scalar) {
                            value = scalar.getValue();
                        } else if (node instanceof SequenceNode seq) {
                            value = constructSequence(seq);
                        } else {
                            value = constructMapping((MappingNode) node);
                        }
                        return Map.of(key, value);
                    }
                });
            }
        }
    }

    /** The template bundled into Lifeline Local's jar at build time (a copy of the repo's template.yaml). */
    public static SamTemplate bundled() throws IOException {
        try (InputStream in = SamTemplate.class.getResourceAsStream("/template.yaml")) {
            if (in == null) {
                throw new IOException("template.yaml is not on the classpath; pass --template");
            }
            return new SamTemplate(parse(in), null);
        }
    }

    /** The whole template as read (CloudFormation's short-form tags in their long form), for checks of its parts. */
    public JsonNode tree() {
        return root;
    }

    private JsonNode resources() {
        return root.path("Resources");
    }

    /** The logical ids of the DynamoDB tables, in template order. */
    public List<String> tableLogicalIds() {
        return resourcesOfType("AWS::DynamoDB::Table");
    }

    /**
     * The logical id of the resource a global environment variable names with {@code !Ref} (e.g. the table behind
     * {@code LIVE_TABLE}); refused when the template does not declare it so.
     */
    public String globalEnvironmentReference(String variable) {
        JsonNode v = root.path("Globals").path("Function").path("Environment").path("Variables").path(variable);
        if (!v.has("Ref")) {
            throw new IllegalStateException("template.yaml: Globals.Function.Environment." + variable
                    + " must be a !Ref to a resource");
        }
        return v.path("Ref").asText();
    }

    private List<String> resourcesOfType(String type) {
        List<String> ids = new ArrayList<>();
        resources().fields().forEachRemaining(e -> {
            if (type.equals(e.getValue().path("Type").asText())) {
                ids.add(e.getKey());
            }
        });
        return ids;
    }

    /** CreateTable for the table {@code logicalId} under {@code tableName}: keys, GSIs and stream as declared. */
    public CreateTableRequest createTableRequest(String logicalId, String tableName) {
        return TableDeclarations.createTableRequest(resources().path(logicalId).path("Properties"), tableName);
    }

    /** The TTL attribute the table {@code logicalId} declares, or null. */
    public String timeToLiveAttribute(String logicalId) {
        return TableDeclarations.timeToLiveAttribute(resources().path(logicalId).path("Properties"));
    }

    /**
     * Every serverless function, with its environment (Globals merged under the function's own) resolved:
     * a value naming a parameter becomes {@code parameters}' value or the parameter's default; one naming a
     * resource becomes {@code resourceNames}' value for it.
     */
    public List<Function> functions(Map<String, String> parameters, Map<String, String> resourceNames) {
        List<Function> out = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Serverless::Function")) {
            JsonNode p = resources().path(id).path("Properties");
            Map<String, String> env = new LinkedHashMap<>();
            root.path("Globals").path("Function").path("Environment").path("Variables").fields()
                    .forEachRemaining(e -> env.put(e.getKey(),
                            intrinsics.resolve(e.getValue(), parameters, resourceNames)));
            p.path("Environment").path("Variables").fields()
                    .forEachRemaining(e -> env.put(e.getKey(),
                            intrinsics.resolve(e.getValue(), parameters, resourceNames)));
            List<Route> routes = new ArrayList<>();
            boolean stream = false;
            List<String> filters = new ArrayList<>();
            for (Iterator<JsonNode> it = p.path("Events").elements(); it.hasNext(); ) {
                JsonNode event = it.next();
                String type = event.path("Type").asText();
                if ("HttpApi".equals(type)) {
                    JsonNode props = event.path("Properties");
                    routes.add(new Route(props.path("Method").asText().toUpperCase(), props.path("Path").asText(),
                            "NONE".equals(props.path("Auth").path("Authorizer").asText())));
                } else if ("DynamoDB".equals(type)) {
                    stream = true;
                    event.path("Properties").path("FilterCriteria").path("Filters")
                            .forEach(f -> filters.add(f.path("Pattern").asText()));
                }
            }
            String handler = p.path("Handler").asText();
            out.add(new Function(id, handler.contains("::") ? handler.substring(0, handler.indexOf("::")) : handler,
                    env, routes, stream, List.copyOf(filters), FunctionPolicy.of(id, p.path("Policies")),
                    handler.contains("::") ? handler.substring(handler.indexOf("::") + 2) : null));
        }
        return out;
    }

    /**
     * The template's EventBridge rules. A target that names an SNS topic keeps the topic's logical id; one
     * that names an API destination gets its endpoint, resolved like environment values (a parameter left
     * empty resolves to "", meaning the destination is not deployed).
     */
    public List<Rule> rules(Map<String, String> parameters) {
        return rules(parameters, Map.of());
    }

    /**
     * The rules, with each connection's secret header values taken from {@code secrets} (a generated Secrets
     * Manager secret's logical id to the value Local made for it; a secret it lacks leaves its header out).
     */
    public List<Rule> rules(Map<String, String> parameters, Map<String, String> secrets) {
        List<Rule> rules = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Events::Rule")) {
            if (!deployed(id, parameters)) {
                continue;
            }
            JsonNode p = resources().path(id).path("Properties");
            List<Target> targets = new ArrayList<>();
            for (JsonNode t : p.path("Targets")) {
                String resource = referencedResource(t.path("Arn"));
                String type = resources().path(resource).path("Type").asText();
                JsonNode transformer = t.path("InputTransformer");
                Map<String, String> paths = new LinkedHashMap<>();
                transformer.path("InputPathsMap").fields().forEachRemaining(e -> paths.put(e.getKey(),
                        e.getValue().asText()));
                String template = transformer.isMissingNode() ? null
                        : intrinsics.resolve(transformer.path("InputTemplate"), parameters, Map.of());
                RetryPolicy retry = retryPolicy(t.path("RetryPolicy"), parameters);
                String queue = t.path("DeadLetterConfig").has("Arn")
                        ? referencedResource(t.path("DeadLetterConfig").path("Arn")) : null;
                String targetId = t.path("Id").asText();
                if ("AWS::SNS::Topic".equals(type)) {
                    targets.add(new Target(targetId, resource, null, null, transformer.isMissingNode() ? null : paths,
                            template, retry, queue, Map.of(), Map.of()));
                } else if ("AWS::Serverless::StateMachine".equals(type)) {
                    targets.add(new Target(targetId, null, null, resource, transformer.isMissingNode() ? null : paths,
                            template, retry, queue, Map.of(), Map.of()));
                } else if ("AWS::Events::ApiDestination".equals(type) && deployed(resource, parameters)) {
                    JsonNode destination = resources().path(resource).path("Properties");
                    String endpoint = intrinsics.resolve(destination.path("InvocationEndpoint"), parameters, Map.of());
                    Map<String, String> headers = new LinkedHashMap<>();
                    Map<String, String> body = new LinkedHashMap<>();
                    connection(referencedResource(destination.path("ConnectionArn")), parameters, secrets, headers, body);
                    targets.add(new Target(targetId, null, endpoint, null, transformer.isMissingNode() ? null : paths,
                            template, retry, queue, headers, body));
                }
            }
            rules.add(new Rule(id, p.path("EventPattern").toString(), targets));
        }
        return rules;
    }

    private RetryPolicy retryPolicy(JsonNode policy, Map<String, String> parameters) {
        if (policy.isMissingNode()) {
            return RetryPolicy.DEFAULT;
        }
        int attempts = policy.has("MaximumRetryAttempts")
                ? Integer.parseInt(intrinsics.resolve(policy.get("MaximumRetryAttempts"), parameters, Map.of()))
                : RetryPolicy.DEFAULT.maximumRetryAttempts();
        Duration age = policy.has("MaximumEventAgeInSeconds")
                ? Duration.ofSeconds(Long.parseLong(intrinsics.resolve(policy.get("MaximumEventAgeInSeconds"),
                        parameters, Map.of())))
                : RetryPolicy.DEFAULT.maximumEventAge();
        return new RetryPolicy(attempts, age);
    }

    private static final Pattern SECRET_REFERENCE =
            Pattern.compile("\\{\\{resolve:secretsmanager:\\$\\{([A-Za-z0-9]+)}:SecretString}}");

    /**
     * An API_KEY connection's header and body parameters as Local sends them: a literal or a parameter as it
     * resolves; a dynamic reference to a generated secret of this template as {@code secrets} has it.
     */
    private void connection(String logicalId, Map<String, String> parameters, Map<String, String> secrets,
                            Map<String, String> headers, Map<String, String> body) {
        JsonNode auth = resources().path(logicalId).path("Properties").path("AuthParameters");
        JsonNode key = auth.path("ApiKeyAuthParameters");
        if (!key.isMissingNode()) {
            String value = secretOrValue(key.path("ApiKeyValue"), parameters, secrets);
            if (value != null) {
                headers.put(key.path("ApiKeyName").asText(), value);
            }
        }
        for (JsonNode b : auth.path("InvocationHttpParameters").path("BodyParameters")) {
            body.put(b.path("Key").asText(), intrinsics.resolve(b.path("Value"), parameters, Map.of()));
        }
    }

    private String secretOrValue(JsonNode value, Map<String, String> parameters, Map<String, String> secrets) {
        if (value.has("Fn::Sub") && value.get("Fn::Sub").isTextual()) {
            Matcher m = SECRET_REFERENCE.matcher(value.get("Fn::Sub").asText());
            if (m.matches()) {
                return secrets.get(m.group(1));
            }
        }
        return intrinsics.resolve(value, parameters, Map.of());
    }

    /** Logical ids of the template's Secrets Manager secrets that CloudFormation generates (GenerateSecretString). */
    public List<String> generatedSecrets() {
        List<String> out = new ArrayList<>();
        for (String id : resourcesOfType("AWS::SecretsManager::Secret")) {
            if (resources().path(id).path("Properties").has("GenerateSecretString")) {
                out.add(id);
            }
        }
        return out;
    }

    public List<Schedule> schedules() {
        List<Schedule> out = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Serverless::Function")) {
            for (JsonNode event : resources().path(id).path("Properties").path("Events")) {
                if ("Schedule".equals(event.path("Type").asText())) {
                    out.add(new Schedule(id, event.path("Properties").path("Schedule").asText()));
                }
            }
        }
        return out;
    }

    /** Every function's SQS events, in template order (SAM's default batch size is 10). */
    public List<QueueEvent> queueEvents() {
        List<QueueEvent> out = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Serverless::Function")) {
            for (JsonNode event : resources().path(id).path("Properties").path("Events")) {
                if ("SQS".equals(event.path("Type").asText())) {
                    JsonNode props = event.path("Properties");
                    out.add(new QueueEvent(id, referencedResource(props.path("Queue")),
                            props.path("BatchSize").asInt(10)));
                }
            }
        }
        return out;
    }

    /**
     * The template's state machines, their definitions read from DefinitionUri (relative to the template,
     * or from the classpath for the template bundled in Local's jar) with DefinitionSubstitutions applied
     * as {@link Intrinsics#resolve} resolves them.
     */
    public List<StateMachine> stateMachines(Map<String, String> parameters, Map<String, String> resourceNames)
            throws IOException {
        List<StateMachine> out = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Serverless::StateMachine")) {
            JsonNode p = resources().path(id).path("Properties");
            String uri = p.path("DefinitionUri").asText();
            String definition;
            if (baseDir != null) {
                definition = Files.readString(baseDir.resolve(uri));
            } else {
                try (InputStream in = SamTemplate.class.getResourceAsStream("/" + uri)) {
                    if (in == null) {
                        throw new IOException(uri + " is not on the classpath");
                    }
                    definition = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
            Map<String, String> substitutions = new LinkedHashMap<>();
            p.path("DefinitionSubstitutions").fields().forEachRemaining(e -> substitutions.put(e.getKey(),
                    intrinsics.resolve(e.getValue(), parameters, resourceNames)));
            for (Map.Entry<String, String> e : substitutions.entrySet()) {
                definition = definition.replace("${" + e.getKey() + "}", e.getValue());
            }
            out.add(new StateMachine(id, definition, substitutions));
        }
        return out;
    }

    /**
     * A function's ReservedConcurrentExecutions for these parameters ({@code !If}, nested ones too, evaluated and
     * {@code !FindInMap} read; {@code AWS::NoValue} or none: empty). Lambda runs at most that many invocations of it at once and throttles the rest.
     */
    public OptionalInt reservedConcurrency(String logicalId, Map<String, String> parameters) {
        JsonNode v = resources().path(logicalId).path("Properties").path("ReservedConcurrentExecutions");
        v = intrinsics.chosen(v, parameters);
        if (v.isMissingNode() || (v.has("Ref") && "AWS::NoValue".equals(v.get("Ref").asText()))) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(Integer.parseInt(intrinsics.resolve(v, parameters, Map.of())));
    }

    /** Logical ids of every resource of {@code type}. */
    public List<String> logicalIds(String type) {
        return resourcesOfType(type);
    }

    /** The logical id of the event bus. */
    public String eventBusLogicalId() {
        return resourcesOfType("AWS::Events::EventBus").get(0);
    }

    /** The names of the template's parameters, in the template's order. */
    public List<String> parameterNames() {
        List<String> names = new ArrayList<>();
        root.path("Parameters").fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** A parameter's value: the override if given, else its default. */
    public String parameter(String name, Map<String, String> parameters) {
        return parameters.containsKey(name) ? parameters.get(name)
                : root.path("Parameters").path(name).path("Default").asText();
    }

    /**
     * The functions that have a Lambda Function URL ({@code AWS::Lambda::Url} resources deployed under
     * {@code parameters}), by logical id, with the URL's AuthType.
     */
    public Map<String, String> functionUrls(Map<String, String> parameters) {
        Map<String, String> urls = new LinkedHashMap<>();
        for (String id : resourcesOfType("AWS::Lambda::Url")) {
            if (deployed(id, parameters)) {
                JsonNode p = resources().path(id).path("Properties");
                urls.put(referencedResource(p.path("TargetFunctionArn")), p.path("AuthType").asText());
            }
        }
        return urls;
    }

    /** The logical id of the function behind the HTTP API's default authorizer. */
    public String authorizerFunction() {
        for (String api : resourcesOfType("AWS::Serverless::HttpApi")) {
            JsonNode auth = resources().path(api).path("Properties").path("Auth");
            String name = auth.path("DefaultAuthorizer").asText();
            return referencedResource(auth.path("Authorizers").path(name).path("FunctionArn"));
        }
        throw new IllegalStateException("template.yaml has no HttpApi with an authorizer");
    }

    /** The authorizer's cache lifetime in seconds (ReauthorizeEvery), 0 when it does not cache. */
    public int authorizerCacheSeconds() {
        for (String api : resourcesOfType("AWS::Serverless::HttpApi")) {
            JsonNode auth = resources().path(api).path("Properties").path("Auth");
            JsonNode authorizer = auth.path("Authorizers").path(auth.path("DefaultAuthorizer").asText());
            return authorizer.path("Identity").path("ReauthorizeEvery").asInt(0);
        }
        return 0;
    }

    /** The logical id a {@code !Ref X}, {@code !Ref X.Alias} or {@code !GetAtt X.Arn} points at. */
    static String referencedResource(JsonNode value) {
        JsonNode target = value.has("Ref") ? value.get("Ref") : value.get("Fn::GetAtt");
        if (target == null) {
            throw new IllegalStateException("Not a reference: " + value);
        }
        String text = target.isArray() ? target.get(0).asText() : target.asText();
        return text.contains(".") ? text.substring(0, text.indexOf('.')) : text;
    }

    /** Whether a resource is deployed: it has no Condition, or its Condition holds for these parameters. */
    public boolean deployed(String logicalId, Map<String, String> parameters) {
        JsonNode condition = resources().path(logicalId).path("Condition");
        return condition.isMissingNode() || intrinsics.condition(condition.asText(), parameters);
    }
}
