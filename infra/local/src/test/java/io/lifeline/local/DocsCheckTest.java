package io.lifeline.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * README.md and docs/ hold together (docs/contributing.md, "Writing docs"): every relative link resolves, to a file
 * and, where one is given, to a heading of it; every {@code path:line} reference names a line that exists; no page
 * points at a file outside the repository; README.md stays within 200 lines; and the contributing page's layout
 * block names exactly the repository's top-level modules and directories; the README's map links every page of
 * docs/. Reads files only.
 */
@Tag("unit")
class DocsCheckTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern PATH_LINE = Pattern.compile(
            "(?<![\\w/.-])((?:[\\w.-]+/)*[\\w.-]+\\.(?:java|md|yaml|yml|json|py|mjs|js|xml|toml|txt)):(\\d+)\\b");
    private static final Pattern OUTSIDE = Pattern.compile(
            "DESIGN\\.md|STACK\\.md|RUNTIMES\\.md|\\.\\./shared|/work/|seed 0\\d\\d|[Ii]ssue \\d+");

    private static Path root;
    private static List<Path> pages;

    @BeforeAll
    static void findRoot() throws IOException {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("template.yaml")))) {
            p = p.getParent();
        }
        assertTrue(p != null, "the repository root is above " + Path.of("").toAbsolutePath());
        root = p;
        List<Path> found = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("RELIABILITY.md"),
                root.resolve("BENCHMARKS.md")));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(found::add);
        }
        pages = found;
    }

    @Test
    void readme_isAtMost200Lines() throws IOException {
        long lines = Files.readAllLines(root.resolve("README.md")).size();
        assertTrue(lines <= 200, "README.md has " + lines + " lines; the limit is 200 (the rest goes to docs/)");
    }

    @Test
    void readmeMap_linksEveryPageOfDocs() throws IOException {
        String readme = Files.readString(root.resolve("README.md"));
        List<String> missing = new ArrayList<>();
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(f -> {
                String link = "(docs/" + f.getFileName() + ")";
                if (!readme.contains(link)) {
                    missing.add("docs/" + f.getFileName());
                }
            });
        }
        assertEquals(List.of(), missing, "pages missing from the README's map of docs/ (add a line under its heading)");
    }

    @Test
    void everyRelativeLink_resolvesToAFileAndItsHeading() throws IOException {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        for (Path page : pages) {
            String text = withoutCode(Files.readString(page));
            Matcher m = LINK.matcher(text);
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-z]+:.*") || target.startsWith("<")) {
                    continue; // https:, mailto: and the like
                }
                String file = target;
                String anchor = null;
                int hash = target.indexOf('#');
                if (hash >= 0) {
                    file = target.substring(0, hash);
                    anchor = target.substring(hash + 1);
                }
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                String where = root.relativize(page) + ": " + target;
                if (!resolved.startsWith(root) || !Files.exists(resolved)) {
                    broken.add(where + " (no such file)");
                } else if (anchor != null && !anchor.isEmpty()) {
                    Set<String> known = anchors.computeIfAbsent(resolved, DocsCheckTest::headingAnchors);
                    if (!known.contains(anchor)) {
                        broken.add(where + " (no such heading)");
                    }
                }
            }
        }
        assertEquals(List.of(), broken, "links that do not resolve");
    }

    @Test
    void everyPathLineReference_namesALineThatExists() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            Matcher m = PATH_LINE.matcher(Files.readString(page));
            while (m.find()) {
                Path file = root.resolve(m.group(1)).normalize();
                int line = Integer.parseInt(m.group(2));
                if (!Files.isRegularFile(file)) {
                    broken.add(root.relativize(page) + ": " + m.group() + " (no such file)");
                } else if (line < 1 || line > Files.readAllLines(file).size()) {
                    broken.add(root.relativize(page) + ": " + m.group() + " (no such line)");
                }
            }
        }
        assertEquals(List.of(), broken, "path:line references that do not resolve");
    }

    @Test
    void noPage_pointsAtAFileOutsideTheRepository() throws IOException {
        List<String> outside = new ArrayList<>();
        for (Path page : pages) {
            List<String> lines = Files.readAllLines(page);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = OUTSIDE.matcher(lines.get(i));
                if (m.find()) {
                    outside.add(root.relativize(page) + ":" + (i + 1) + ": " + m.group());
                }
            }
        }
        assertEquals(List.of(), outside, "say it in the repository's own words");
    }

    @Test
    void contributingLayout_namesExactlyTheTopLevelModulesAndDirectories() throws IOException {
        String page = Files.readString(root.resolve("docs/contributing.md"));
        int at = page.indexOf("### Layout");
        assertTrue(at >= 0, "docs/contributing.md has a Layout section");
        int open = page.indexOf("```\n", at);
        String block = page.substring(open + 4, page.indexOf("\n```", open + 4));
        Set<String> named = block.lines()
                .filter(l -> !l.isEmpty() && !Character.isWhitespace(l.charAt(0)))
                .map(l -> l.split("\\s+")[0])
                .filter(w -> w.endsWith("/"))
                .map(w -> w.substring(0, w.length() - 1))
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> actual = new TreeSet<>();
        try (Stream<Path> top = Files.list(root)) {
            for (Path d : (Iterable<Path>) top::iterator) {
                String name = d.getFileName().toString();
                if (!Files.isDirectory(d) || name.equals(".git") || name.equals("target") || name.equals(".lifeline")
                        || name.equals(".idea") || name.equals("node_modules")) {
                    continue;
                }
                if (name.equals("infra")) {
                    try (Stream<Path> infra = Files.list(d)) {
                        infra.filter(Files::isDirectory).forEach(s -> actual.add("infra/" + s.getFileName()));
                    }
                } else {
                    actual.add(name);
                }
            }
        }
        assertEquals(actual, named, "the layout block's directories (docs/contributing.md) against the repository");
        block.lines().filter(l -> !l.isEmpty() && !Character.isWhitespace(l.charAt(0)))
                .map(l -> l.split("\\s+")[0]).filter(w -> !w.endsWith("/"))
                .forEach(f -> assertTrue(Files.isRegularFile(root.resolve(f)), "the layout names " + f));
    }

    /** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats -1, -2. */
    private static Set<String> headingAnchors(Path file) {
        Set<String> anchors = new TreeSet<>();
        if (!file.toString().endsWith(".md")) {
            return anchors;
        }
        Map<String, Integer> seen = new HashMap<>();
        try {
            for (String line : withoutCode(Files.readString(file)).split("\n")) {
                Matcher h = Pattern.compile("^#{1,6} (.+?)#*\\s*$").matcher(line);
                if (!h.matches()) {
                    continue;
                }
                String slug = h.group(1).trim().toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return anchors;
    }

    /** The text with fenced code blocks blanked out (a link or heading inside code is not one). */
    private static String withoutCode(String text) {
        StringBuilder out = new StringBuilder();
        boolean code = false;
        for (String line : text.split("\n", -1)) {
            if (line.startsWith("```")) {
                code = !code;
                out.append('\n');
                continue;
            }
            out.append(code ? "" : line).append('\n');
        }
        return out.toString();
    }
}
