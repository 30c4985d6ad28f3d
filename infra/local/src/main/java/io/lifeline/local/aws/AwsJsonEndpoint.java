package io.lifeline.local.aws;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpHandler;
import io.lifeline.support.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * How Local's AWS stand-ins (the bus, Step Functions) answer the SDK: the AWS JSON protocol, the operation named
 * by the X-Amz-Target header, a JSON body each way. Each stand-in speaks the few operations Lifeline uses.
 */
final class AwsJsonEndpoint {
    /** The HTTP status and the JSON body of an answer. */
    record Answer(int status, ObjectNode body) {
        static Answer ok(ObjectNode body) {
            return new Answer(200, body);
        }

        /** An AWS error: {@code __type} is what the SDK turns into its exception. */
        static Answer error(String type, String message) {
            return new Answer(400, Json.object().put("__type", type).put("message", message));
        }
    }

    /** The one operation a stand-in speaks: its answer to a request body. */
    interface Operation {
        Answer answer(JsonNode request) throws IOException;
    }

    private AwsJsonEndpoint() {
    }

    /** Answers the target {@code name} with {@code operation}'s answer to the request body, any other with 400. */
    static HttpHandler serving(String name, String contentType, String speaksOnly, Operation operation) {
        return serving(Map.of(name, operation), contentType, speaksOnly);
    }

    /** Answers each target of {@code operations} with its operation's answer, any other with 400. */
    static HttpHandler serving(Map<String, Operation> operations, String contentType, String speaksOnly) {
        return exchange -> {
            try (exchange) {
                String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
                byte[] body;
                try (InputStream in = exchange.getRequestBody()) {
                    body = in.readAllBytes();
                }
                Operation operation = target == null ? null : operations.get(target);
                Answer answer = operation != null
                        ? operation.answer(Json.parse(new String(body, StandardCharsets.UTF_8)))
                        : Answer.error("UnknownOperationException", speaksOnly);
                byte[] out = Json.write(answer.body()).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", contentType);
                exchange.sendResponseHeaders(answer.status(), out.length);
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(out);
                }
            }
        };
    }
}
