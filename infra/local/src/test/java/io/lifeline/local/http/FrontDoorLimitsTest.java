package io.lifeline.local.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lifeline.local.stack.TestStack;
import io.lifeline.support.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lifeline Local's front door over the real gateway, functions and the engine (TestStack), with short limits
 * (1 s for a head or a body, 8 connections per client), spoken to by raw sockets on 127.0.0.1: every refusal is a
 * JSON answer in the API's error shape with its documented code, never a closed socket.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("contract")
class FrontDoorLimitsTest {
    private static final FrontDoorLimits LIMITS = new FrontDoorLimits(Duration.ofSeconds(1), Duration.ofSeconds(1),
            Duration.ofSeconds(5), 8 * 1024, 16 * 1024, 100, 64 * 1024, 8, 1_000, Duration.ofSeconds(1));

    static TestStack stack;
    static FrontDoor door;

    @BeforeAll
    static void start() throws Exception {
        stack = TestStack.start();
        door = new FrontDoor(FrontDoor.handler(stack.gateway), 0, LIMITS);
    }

    @AfterAll
    static void stop() throws Exception {
        door.close();
        stack.close();
    }

    /** A status and its parsed JSON body, as read off the socket. */
    record Answer(int status, String head, JsonNode body) {
        String code() {
            return body.path("code").asText();
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void requestLineOverTheLimit_isAnswered414UriTooLong() throws Exception {
        String path = "/v1/teams/acme/agents?x=" + "a".repeat(1024 * 1024);
        Answer a = exchangeWhileSending(("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        assertRefused(a, 414, "URI_TOO_LONG");
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void fiveHundredHeaders_areAnswered431HeadersTooLarge() throws Exception {
        StringBuilder head = new StringBuilder("GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\n");
        for (int i = 0; i < 500; i++) {
            head.append("X-H").append(i).append(": v\r\n");
        }
        Answer a = exchangeWhileSending(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        assertRefused(a, 431, "HEADERS_TOO_LARGE");
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void oneMegabyteHeader_isAnswered431HeadersTooLarge() throws Exception {
        String head = "GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(1024 * 1024) + "\r\n\r\n";
        Answer a = exchangeWhileSending(head.getBytes(StandardCharsets.US_ASCII));
        assertRefused(a, 431, "HEADERS_TOO_LARGE");
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void bodyDeclaredOverTheLimit_isAnswered413BeforeAnyOfItIsSent() throws Exception {
        // Only the head is sent: the answer cannot have waited for the 100 MB it announces.
        String head = "POST /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.adminKey
                + "\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n";
        try (Socket s = connect()) {
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertRefused(read(s.getInputStream()), 413, "PAYLOAD_TOO_LARGE");
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void headSentHalfway_isAnswered408AfterTheHeadTimeout() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write("POST /v1/teams/acme/agents/a1/heartbeat HTTP/1.1\r\nHost: x\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertRefused(read(s.getInputStream()), 408, "REQUEST_TIMEOUT");
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void requestWaitingInsideLocal_isTheOldestWait_aClientStillSendingIsNot() throws Exception {
        String get = "GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.adminKey
                + "\r\n\r\n";
        try (Socket slow = connect(); Socket s = connect()) {
            slow.getOutputStream().write("GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            slow.getOutputStream().flush();
            assertEquals(0, door.oldestWaitNanos(), "a half-sent head is the client's wait, not Local's");
            Thread pause = new Thread(() -> {
                try {
                    stack.host.stopTheWorld(Duration.ofSeconds(3));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            pause.start();
            try {
                while (door.oldestWaitNanos() == 0) {
                    s.getOutputStream().write(get.getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    Thread.sleep(100); // the request now waits in the stopped functions (or was answered first)
                    if (door.oldestWaitNanos() == 0) {
                        read(s.getInputStream());
                    }
                }
                while (door.oldestWaitNanos() < TimeUnit.MILLISECONDS.toNanos(500)) {
                    Thread.sleep(20); // bounded by the test's timeout
                }
            } finally {
                pause.join();
            }
            assertEquals(200, read(s.getInputStream()).status());
            assertEquals(0, door.oldestWaitNanos(), "answered: nothing waits");
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void connectionThatSendsNothing_isAnswered408AfterTheHeadTimeout() throws Exception {
        try (Socket s = connect()) {
            assertRefused(read(s.getInputStream()), 408, "REQUEST_TIMEOUT");
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void bodySentHalfway_isAnswered408AfterTheBodyTimeout() throws Exception {
        String head = "POST /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.adminKey
                + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"agentId\":";
        try (Socket s = connect()) {
            s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertRefused(read(s.getInputStream()), 408, "REQUEST_TIMEOUT");
        }
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS)
    void wholeRequest_isAnsweredByTheGateway_andTheConnectionIsKeptForTheNext() throws Exception {
        String get = "GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.adminKey
                + "\r\n\r\n";
        try (Socket s = connect()) {
            for (int i = 0; i < 2; i++) {
                s.getOutputStream().write(get.getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                Answer a = read(s.getInputStream());
                assertEquals(200, a.status(), a.head());
                assertTrue(a.body().has("agents"), a.body().toString());
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void manyHeldHalfSentConnections_fromOneClient_areBoundedAndAFreshRequestIsStillAnswered() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < 40; i++) {
                Socket s = connect();
                s.getOutputStream().write("GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                held.add(s);
            }
            String get = "GET /v1/teams/acme/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + stack.adminKey
                    + "\r\nConnection: close\r\n\r\n";
            try (Socket fresh = connect()) {
                fresh.setSoTimeout(1_000); // answered within 1 s, or the read fails the test
                fresh.getOutputStream().write(get.getBytes(StandardCharsets.US_ASCII));
                fresh.getOutputStream().flush();
                assertEquals(200, read(fresh.getInputStream()).status());
            }
            assertTrue(door.openConnections() <= LIMITS.maxConnectionsPerClient(),
                    "open connections: " + door.openConnections());
            int closedByServer = 0;
            for (Socket s : held) {
                s.setSoTimeout(5_000);
                try {
                    if (s.getInputStream().read() < 0) {
                        closedByServer++;
                    }
                } catch (IOException reset) {
                    closedByServer++;
                }
            }
            // 40 held + 1 fresh through a limit of 8: at least 33 of the held ones were closed to make room.
            assertTrue(closedByServer >= 33, "closed by the server: " + closedByServer);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
    }

    private static void assertRefused(Answer a, int status, String code) {
        assertEquals(status, a.status(), a.head());
        assertEquals(code, a.code(), a.body().toString());
        assertFalse(a.body().path("success").asBoolean(true), a.body().toString());
        assertFalse(a.body().path("error").asText().isEmpty(), a.body().toString());
        assertTrue(a.head().toLowerCase().contains("content-type: application/json"), a.head());
    }

    private static Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), door.port());
        s.setSoTimeout(10_000);
        return s;
    }

    /** Sends {@code request} from another thread (it may be far bigger than what the door reads) and reads the answer. */
    private static Answer exchangeWhileSending(byte[] request) throws Exception {
        try (Socket s = connect()) {
            Thread sender = new Thread(() -> {
                try {
                    OutputStream out = s.getOutputStream();
                    out.write(request);
                    out.flush();
                } catch (IOException refusedMidway) {
                    // The door answered and closed before taking it all: expected.
                }
            });
            sender.setDaemon(true);
            sender.start();
            Answer a = read(s.getInputStream());
            s.close();
            sender.join(5_000);
            return a;
        }
    }

    /** One HTTP/1.1 answer with a Content-Length body. */
    static Answer read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed before an answer; read: " + head);
            }
            head.write(b);
            matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        int status = Integer.parseInt(text.substring(9, 12));
        int length = 0;
        for (String line : text.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring("content-length:".length()).trim());
            }
        }
        byte[] body = in.readNBytes(length);
        return new Answer(status, text, length == 0 ? Json.object() : Json.parse(new String(body, StandardCharsets.UTF_8)));
    }
}
