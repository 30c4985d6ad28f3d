package io.lifeline.support;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Structured logs: one JSON object per line on stdout, which Lambda sends to CloudWatch Logs as is (and
 * Logs Insights parses). Every line has {@code level} and {@code msg}; the rest are the event's fields.
 * No logging framework: a line is one small Jackson tree written once, so the hot path stays cheap.
 */
public final class Log {
    private static final Consumer<String> STDOUT = System.out::println;
    private static volatile Consumer<String> sink = STDOUT;
    /** Fields every line of the invocation running on this thread carries (requestId, operation). */
    private static final ThreadLocal<ObjectNode> INVOCATION = new ThreadLocal<>();

    private Log() {
    }

    /** A new line with its level (INFO, WARN, ERROR) and message; add fields, then {@link #emit}. */
    public static ObjectNode line(String level, String msg) {
        ObjectNode line = Json.object().put("level", level).put("msg", msg);
        ObjectNode invocation = INVOCATION.get();
        return invocation == null ? line : line.setAll(invocation);
    }

    /** The invocation's context; a line made inside it (even deep in a helper) carries both fields. */
    public static final class Invocation implements AutoCloseable {
        /** The context this one interrupted (Lifeline Local can run one function inside another's call). */
        private final ObjectNode outer;

        private Invocation(ObjectNode outer) {
            this.outer = outer;
        }

        @Override
        public void close() {
            if (outer == null) {
                INVOCATION.remove();
            } else {
                INVOCATION.set(outer);
            }
        }
    }

    /** Starts an invocation's context on this thread: use with try-with-resources. */
    public static Invocation invocation(String requestId, String operation) {
        ObjectNode fields = Json.object();
        Json.putIfPresent(fields, "requestId", requestId);
        fields.put("operation", operation);
        ObjectNode outer = INVOCATION.get();
        INVOCATION.set(fields);
        return new Invocation(outer);
    }

    /**
     * {@code task} as it would run here, for another thread: lines it makes carry this thread's invocation context
     * (a handler's worker threads log as the invocation they work for).
     */
    public static <T> Callable<T> carrying(Callable<T> task) {
        ObjectNode context = INVOCATION.get();
        return () -> {
            ObjectNode outer = INVOCATION.get();
            if (context == null) {
                INVOCATION.remove();
            } else {
                INVOCATION.set(context);
            }
            try {
                return task.call();
            } finally {
                if (outer == null) {
                    INVOCATION.remove();
                } else {
                    INVOCATION.set(outer);
                }
            }
        };
    }

    /** Listeners that see every line as well as the sink (Lifeline Local's metric extraction); rarely any. */
    private static final List<Consumer<String>> TAPS = new CopyOnWriteArrayList<>();

    public static void emit(ObjectNode line) {
        String text = Json.write(line);
        sink.accept(text);
        for (Consumer<String> tap : TAPS) {
            tap.accept(text);
        }
    }

    /** Adds a listener of every line emitted in this JVM, until {@link #untap}. */
    public static void tap(Consumer<String> listener) {
        TAPS.add(listener);
    }

    public static void untap(Consumer<String> listener) {
        TAPS.remove(listener);
    }

    /** Where lines go; a test captures them here. {@code null} restores stdout. */
    public static void sink(Consumer<String> newSink) {
        sink = newSink == null ? STDOUT : newSink;
    }
}
