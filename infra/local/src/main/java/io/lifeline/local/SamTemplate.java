package io.lifeline.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.StreamSpecification;

/**
 * template.yaml, read for what Lifeline Local and the tests need: the table, the functions with their
 * handlers, environment and events, and the HTTP API's authorizer. CloudFormation tags are dropped by the
 * YAML reader, so {@code !Ref X} reads as {@code X}; {@link #resolve} maps such names to local values.
 */
public final class SamTemplate {
    /** An HTTP route: method and path exactly as the template writes them. */
    public record Route(String method, String path) {
        public String routeKey() {
            return method + " " + path;
        }
    }

    /** A function of the template. {@code handler} is the class name without {@code ::handleRequest}. */
    public record Function(String logicalId, String handlerClass, Map<String, String> environment,
                           List<Route> routes, boolean readsTableStream) {
    }

    /** Where a rule sends a matching event: the alerts topic, or an HTTP endpoint (API destination). */
    public record Target(String id, String topic, String endpoint) {
    }

    /** An EventBridge rule: its pattern (JSON) and targets. */
    public record Rule(String logicalId, String eventPattern, List<Target> targets) {
    }

    /** A function's Schedule event. */
    public record Schedule(String functionId, String expression) {
    }

    private final JsonNode root;

    private SamTemplate(JsonNode root) {
        this.root = root;
    }

    public static SamTemplate read(Path path) throws IOException {
        try (InputStream in = Files.newInputStream(path)) {
            return read(in);
        }
    }

    public static SamTemplate read(InputStream in) throws IOException {
        return new SamTemplate(new ObjectMapper(new YAMLFactory()).readTree(in));
    }

    /** The template bundled into Lifeline Local's jar at build time (a copy of the repo's template.yaml). */
    public static SamTemplate bundled() throws IOException {
        try (InputStream in = SamTemplate.class.getResourceAsStream("/template.yaml")) {
            if (in == null) {
                throw new IOException("template.yaml is not on the classpath; pass --template");
            }
            return read(in);
        }
    }

    private JsonNode resources() {
        return root.path("Resources");
    }

    /** The logical id of the one DynamoDB table. */
    public String tableLogicalId() {
        return resourcesOfType("AWS::DynamoDB::Table").get(0);
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

    /** CreateTable for the template's table under {@code tableName}: keys, GSIs and stream as declared. */
    public CreateTableRequest createTableRequest(String tableName) {
        JsonNode p = resources().path(tableLogicalId()).path("Properties");
        List<AttributeDefinition> attributes = new ArrayList<>();
        p.path("AttributeDefinitions").forEach(a -> attributes.add(AttributeDefinition.builder()
                .attributeName(a.path("AttributeName").asText()).attributeType(a.path("AttributeType").asText())
                .build()));
        List<GlobalSecondaryIndex> gsis = new ArrayList<>();
        p.path("GlobalSecondaryIndexes").forEach(g -> gsis.add(GlobalSecondaryIndex.builder()
                .indexName(g.path("IndexName").asText())
                .keySchema(keySchema(g.path("KeySchema")))
                .projection(Projection.builder().projectionType(g.path("Projection").path("ProjectionType").asText())
                        .build())
                .build()));
        JsonNode stream = p.path("StreamSpecification");
        return CreateTableRequest.builder()
                .tableName(tableName)
                .billingMode(BillingMode.fromValue(p.path("BillingMode").asText("PAY_PER_REQUEST")))
                .attributeDefinitions(attributes)
                .keySchema(keySchema(p.path("KeySchema")))
                .globalSecondaryIndexes(gsis.isEmpty() ? null : gsis)
                .streamSpecification(stream.isMissingNode() ? null : StreamSpecification.builder()
                        .streamEnabled(true).streamViewType(stream.path("StreamViewType").asText()).build())
                .build();
    }

    /** The TTL attribute the table declares, or null. */
    public String timeToLiveAttribute() {
        JsonNode ttl = resources().path(tableLogicalId()).path("Properties").path("TimeToLiveSpecification");
        return ttl.path("Enabled").asBoolean(false) ? ttl.path("AttributeName").asText() : null;
    }

    private static List<KeySchemaElement> keySchema(JsonNode schema) {
        List<KeySchemaElement> keys = new ArrayList<>();
        schema.forEach(k -> keys.add(KeySchemaElement.builder().attributeName(k.path("AttributeName").asText())
                .keyType(k.path("KeyType").asText()).build()));
        return keys;
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
                    .forEachRemaining(e -> env.put(e.getKey(), resolve(e.getValue().asText(), parameters, resourceNames)));
            p.path("Environment").path("Variables").fields()
                    .forEachRemaining(e -> env.put(e.getKey(), resolve(e.getValue().asText(), parameters, resourceNames)));
            List<Route> routes = new ArrayList<>();
            boolean stream = false;
            for (Iterator<JsonNode> it = p.path("Events").elements(); it.hasNext(); ) {
                JsonNode event = it.next();
                String type = event.path("Type").asText();
                if ("HttpApi".equals(type)) {
                    routes.add(new Route(event.path("Properties").path("Method").asText().toUpperCase(),
                            event.path("Properties").path("Path").asText()));
                } else if ("DynamoDB".equals(type)) {
                    stream = true;
                }
            }
            String handler = p.path("Handler").asText();
            out.add(new Function(id, handler.contains("::") ? handler.substring(0, handler.indexOf("::")) : handler,
                    env, routes, stream));
        }
        return out;
    }

    /**
     * The template's EventBridge rules. A target that names an SNS topic keeps the topic's logical id; one
     * that names an API destination gets its endpoint, resolved like environment values (a parameter left
     * empty resolves to "", meaning the destination is not deployed).
     */
    public List<Rule> rules(Map<String, String> parameters) {
        List<Rule> rules = new ArrayList<>();
        for (String id : resourcesOfType("AWS::Events::Rule")) {
            JsonNode p = resources().path(id).path("Properties");
            List<Target> targets = new ArrayList<>();
            for (JsonNode t : p.path("Targets")) {
                String ref = t.path("Arn").asText();
                String resource = ref.contains(".") ? ref.substring(0, ref.indexOf('.')) : ref;
                String type = resources().path(resource).path("Type").asText();
                if ("AWS::SNS::Topic".equals(type)) {
                    targets.add(new Target(t.path("Id").asText(), resource, null));
                } else if ("AWS::Events::ApiDestination".equals(type)) {
                    String endpoint = resolve(resources().path(resource).path("Properties").path("InvocationEndpoint")
                            .asText(), parameters, Map.of());
                    targets.add(new Target(t.path("Id").asText(), null, endpoint));
                }
            }
            rules.add(new Rule(id, p.path("EventPattern").toString(), targets));
        }
        return rules;
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

    /** The logical id of the event bus. */
    public String eventBusLogicalId() {
        return resourcesOfType("AWS::Events::EventBus").get(0);
    }

    /** A parameter's value: the override if given, else its default. */
    public String parameter(String name, Map<String, String> parameters) {
        return parameters.containsKey(name) ? parameters.get(name)
                : root.path("Parameters").path(name).path("Default").asText();
    }

    /** The logical id of the function behind the HTTP API's default authorizer. */
    public String authorizerFunction() {
        for (String api : resourcesOfType("AWS::Serverless::HttpApi")) {
            JsonNode auth = resources().path(api).path("Properties").path("Auth");
            String name = auth.path("DefaultAuthorizer").asText();
            // "!GetAtt Fn.Arn" or "!Ref Fn.Alias" both read as "Fn.<something>" once tags are dropped.
            String arn = auth.path("Authorizers").path(name).path("FunctionArn").asText();
            return arn.contains(".") ? arn.substring(0, arn.indexOf('.')) : arn;
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

    private String resolve(String value, Map<String, String> parameters, Map<String, String> resourceNames) {
        if (parameters.containsKey(value)) {
            return parameters.get(value);
        }
        JsonNode parameter = root.path("Parameters").path(value);
        if (!parameter.isMissingNode()) {
            return parameter.path("Default").asText();
        }
        if (resources().has(value)) {
            String name = resourceNames.get(value);
            if (name == null) {
                throw new IllegalStateException("No local name for resource " + value);
            }
            return name;
        }
        return value;
    }
}
