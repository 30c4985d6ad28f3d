package io.lifeline.local.aws;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What Local's AWS stand-ins answer a target they do not speak: 400 UnknownOperationException in their own JSON
 * protocol version, as AWS would (the operations they do speak are exercised through the SDK everywhere else).
 */
@Tag("e2e")
class AwsJsonEndpointTest {
    static TestStack stack;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    static HttpResponse<String> post(URI endpoint, String target, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(endpoint).header("X-Amz-Target", target)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void bus_otherOperation_answers400UnknownOperation() throws Exception {
        HttpResponse<String> r = post(stack.bus.endpoint(), "AWSEvents.ListRules", "{}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("application/x-amz-json-1.1", r.headers().firstValue("Content-Type").orElse(null));
        JsonNode body = Json.parse(r.body());
        assertEquals("UnknownOperationException", body.get("__type").asText());
        assertEquals("Lifeline Local's bus speaks PutEvents and StartReplay", body.get("message").asText());
    }

    @Test
    void stepFunctions_otherOperation_answers400UnknownOperation() throws Exception {
        HttpResponse<String> r = post(stack.stepFunctions.endpoint(), "AWSStepFunctions.ListExecutions", "{}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("application/x-amz-json-1.0", r.headers().firstValue("Content-Type").orElse(null));
        JsonNode body = Json.parse(r.body());
        assertEquals("UnknownOperationException", body.get("__type").asText());
        assertEquals("Lifeline Local's Step Functions speaks StartExecution only", body.get("message").asText());
    }

    @Test
    void stepFunctions_unknownMachine_answers400StateMachineDoesNotExist() throws Exception {
        HttpResponse<String> r = post(stack.stepFunctions.endpoint(), "AWSStepFunctions.StartExecution",
                "{\"stateMachineArn\":\"arn:aws:states:local:0:stateMachine:nope\",\"input\":\"{}\"}");
        assertEquals(400, r.statusCode(), r.body());
        assertEquals("StateMachineDoesNotExist", Json.parse(r.body()).get("__type").asText());
    }
}
