package io.lifeline.client.heartbeatmd;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Function;

/**
 * The {@code condition} language of this runner. An action with a condition runs only when it holds:
 * <ul>
 *   <li>{@code file_exists:<path>} — the path exists; relative paths are resolved against heartbeat.md's folder</li>
 *   <li>{@code env:<NAME>} — the environment variable is set and not empty</li>
 *   <li>{@code env:<NAME>=<value>} — the environment variable equals the value exactly</li>
 *   <li>{@code not:<condition>} — the inner condition does not hold (nests: {@code not:not:env:X})</li>
 *   <li>{@code always} and {@code never}</li>
 * </ul>
 * Anything else is refused when the file is parsed, naming the line.
 */
public sealed interface Condition {

    /** What a condition may look at. {@code env} answers null for an unset variable. */
    record Context(Path baseDir, Function<String, String> env) {
    }

    boolean holds(Context context);

    /** Deepest nesting of {@code not:} accepted ({@code not:not:env:X} is 2); deeper is refused when parsed. */
    int MAX_DEPTH = 16;

    /** @throws IllegalArgumentException with a sentence for a person when the text is not a condition */
    static Condition parse(String text) {
        // The not: prefixes are counted in a loop, not by recursion, and bounded: a deep nesting is a clear error
        // here rather than a StackOverflowError in the parser or later in holds(), equals() or toString().
        String t = text.strip();
        int depth = 0;
        while (t.startsWith("not:")) {
            if (++depth > MAX_DEPTH) {
                throw new IllegalArgumentException("condition nests not: more than " + MAX_DEPTH
                        + " deep; use at most " + MAX_DEPTH + " (not:not:<condition> is the same as <condition>)");
            }
            t = t.substring(4).strip();
        }
        Condition c = parseSimple(t);
        for (int i = 0; i < depth; i++) {
            c = new Not(c);
        }
        return c;
    }

    private static Condition parseSimple(String t) {
        if (t.equals("always")) {
            return new Constant(true);
        }
        if (t.equals("never")) {
            return new Constant(false);
        }
        if (t.startsWith("file_exists:")) {
            String path = t.substring("file_exists:".length()).strip();
            if (path.isEmpty()) {
                throw new IllegalArgumentException("file_exists: needs a path, e.g. file_exists:data/ready.flag");
            }
            return new FileExists(path);
        }
        if (t.startsWith("env:")) {
            String rest = t.substring(4).strip();
            int eq = rest.indexOf('=');
            String name = eq < 0 ? rest : rest.substring(0, eq);
            if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException("env: needs a variable name, e.g. env:DEPLOY_ENABLED or env:MODE=prod");
            }
            return new Env(name, eq < 0 ? null : rest.substring(eq + 1));
        }
        throw new IllegalArgumentException("unknown condition '" + HeartbeatFile.printable(t)
                + "'; use file_exists:<path>, env:<NAME>, env:<NAME>=<value>, not:<condition>, always or never");
    }

    record Constant(boolean value) implements Condition {
        @Override
        public boolean holds(Context context) {
            return value;
        }
    }

    record Not(Condition inner) implements Condition {
        @Override
        public boolean holds(Context context) {
            return !inner.holds(context);
        }
    }

    record FileExists(String path) implements Condition {
        @Override
        public boolean holds(Context context) {
            return Files.exists(context.baseDir().resolve(path));
        }
    }

    record Env(String name, String expected) implements Condition {
        @Override
        public boolean holds(Context context) {
            String value = context.env().apply(name);
            return expected == null ? value != null && !value.isEmpty() : expected.equals(value);
        }
    }
}
