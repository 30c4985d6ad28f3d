package io.lifeline.local.http;

import io.lifeline.support.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** What the front door writes back: an answer on the wire (HTTP/1.1 head and body), and its own answers' shape. */
final class Answers {
    private Answers() {
    }

    /** The front door's own answers, in the API's error shape. */
    static LocalGateway.Response error(int status, String code, String message, Map<String, String> extra) {
        Map<String, String> headers = new LinkedHashMap<>(extra);
        headers.put("content-type", "application/json");
        String body = Json.object().put("success", false).put("error", message).put("code", code)
                .toString();
        return new LocalGateway.Response(status, headers, body);
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 201 -> "Created";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 304 -> "Not Modified";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 408 -> "Request Timeout";
            case 409 -> "Conflict";
            case 413 -> "Payload Too Large";
            case 414 -> "URI Too Long";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
    }

    static void write(Socket socket, OutputStream out, LocalGateway.Response response, boolean keepAlive, boolean headOnly)
            throws IOException {
        byte[] body = response.body() == null ? new byte[0] : response.body().getBytes(StandardCharsets.UTF_8);
        StringBuilder head = new StringBuilder("HTTP/1.1 ").append(response.status()).append(' ')
                .append(reason(response.status())).append("\r\n");
        response.headers().forEach((k, v) -> {
            String name = k.toLowerCase(Locale.ROOT);
            if (!name.equals("content-length") && !name.equals("connection")
                    && !name.equals("transfer-encoding")) {
                head.append(k).append(": ").append(v).append("\r\n");
            }
        });
        if (response.status() != 204 && response.status() != 304) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: ").append(keepAlive ? "keep-alive" : "close").append("\r\n\r\n");
        out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        if (response.status() != 204 && response.status() != 304 && !headOnly) {
            out.write(body);
        }
        out.flush();
        if (!keepAlive) {
            socket.shutdownOutput();
        }
    }
}
