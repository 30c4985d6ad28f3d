package io.lifeline.local.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lifeline.local.app.LocalMain;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Lifeline Local's command line run in this JVM ({@code LocalMain.commandLine()}), its output captured. */
public final class LocalCommandLine {
    private static final Pattern KEY = Pattern.compile("^(ll_\\S+)$", Pattern.MULTILINE);

    private LocalCommandLine() {
    }

    /** One run: exit code, stdout, stderr. */
    public record Run(int exit, String out, String err) {
        /** The key the command printed on a line of its own (shown once). */
        String key() {
            Matcher m = KEY.matcher(out);
            assertTrue(m.find(), out);
            return m.group(1);
        }
    }

    public static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int exit = LocalMain.commandLine().execute(args);
            return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
        }
    }
}
