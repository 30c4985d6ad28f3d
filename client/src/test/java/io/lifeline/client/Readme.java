package io.lifeline.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The repository's README.md and docs pages, read by tests that run what they tell a reader to run (docs/mcp.md's
 * opencode.json entry, MCP client entry and command lines), so the docs cannot drift from what works.
 */
public final class Readme {
    private Readme() {
    }

    /** README.md of the repository (tests run in the module's directory, one below it). */
    public static String text() throws IOException {
        return page("README.md");
    }

    /** A page of the repository's docs, by its path from the root, e.g. {@code docs/mcp.md}. */
    public static String page(String path) throws IOException {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("template.yaml"))) {
                return Files.readString(p.resolve(path));
            }
        }
        throw new IOException("no README.md above " + here);
    }

    /** The text of the section {@code ## heading}, up to the next {@code ## } heading. */
    public static String section(String heading) throws IOException {
        String all = text();
        int start = all.indexOf("\n## " + heading + "\n");
        if (start < 0) {
            throw new IOException("README.md has no section '## " + heading + "'");
        }
        int end = all.indexOf("\n## ", start + 4);
        return all.substring(start, end < 0 ? all.length() : end);
    }

    /** The fenced code blocks of {@code text} whose info string is {@code lang}, in order. */
    public static List<String> blocks(String text, String lang) {
        List<String> blocks = new ArrayList<>();
        String fence = "```" + lang + "\n";
        int at = 0;
        while ((at = text.indexOf(fence, at)) >= 0) {
            int end = text.indexOf("\n```", at + fence.length());
            blocks.add(text.substring(at + fence.length(), end + 1));
            at = end + 4;
        }
        return blocks;
    }

    /**
     * The shell command lines of {@code bash} blocks: continuations joined, {@code #} comments dropped, split into
     * words the way sh would for the quoting README uses (single and double quotes, no expansions).
     */
    public static List<List<String>> commandLines(List<String> bashBlocks) {
        List<List<String>> lines = new ArrayList<>();
        for (String block : bashBlocks) {
            for (String line : block.replace("\\\n", " ").split("\n")) {
                List<String> words = words(line);
                if (!words.isEmpty()) {
                    lines.add(words);
                }
            }
        }
        return lines;
    }

    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (c == '#' && word == null) {
                break;
            } else if (Character.isWhitespace(c)) {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }
}
