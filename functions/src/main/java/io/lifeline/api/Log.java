package io.lifeline.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Consumer;

/**
 * Structured logs: one JSON object per line on stdout, which Lambda sends to CloudWatch Logs as is (and
 * Logs Insights parses). Every line has {@code level} and {@code msg}; the rest are the event's fields.
 * No logging framework: a line is one small Jackson tree written once, so the hot path stays cheap.
 */
public final class Log {
    private static final Consumer<String> STDOUT = System.out::println;
    private static volatile Consumer<String> sink = STDOUT;

    private Log() {
    }

    /** A new line with its level (INFO, WARN, ERROR) and message; add fields, then {@link #emit}. */
    public static ObjectNode line(String level, String msg) {
        return Json.object().put("level", level).put("msg", msg);
    }

    public static void emit(ObjectNode line) {
        sink.accept(Json.write(line));
    }

    /** Where lines go; a test captures them here. {@code null} restores stdout. */
    public static void sink(Consumer<String> newSink) {
        sink = newSink == null ? STDOUT : newSink;
    }
}
