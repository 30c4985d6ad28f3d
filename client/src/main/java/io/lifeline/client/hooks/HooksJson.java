package io.lifeline.client.hooks;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The settings shape Claude Code, Codex and Gemini CLI share: {@code {"hooks": {"Event": [{"matcher"?,
 * "hooks": [handler, ...]}, ...]}}}. Lifeline's handlers are merged in and taken out one by one; every other key,
 * event, group and handler is kept as it was, in its place. A file with comments (Gemini CLI reads them) is edited
 * in place by {@link JsoncSplice}, its comments kept.
 */
final class HooksJson {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final DefaultPrettyPrinter PRETTY = new DefaultPrettyPrinter(Separators.createDefaultInstance()
            .withObjectFieldValueSpacing(Separators.Spacing.AFTER).withObjectEmptySeparator("")
            .withArrayEmptySeparator("")).withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"));

    private HooksJson() {
    }

    static ObjectNode handler() {
        return JSON.createObjectNode();
    }

    /** The file's text, or null when it does not exist. */
    static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            throw new HookConfigException("cannot read " + file + ": " + e.getMessage());
        }
    }

    /** The file's JSON object ({@code {}} for no file or a blank one); anything else is refused. */
    static ObjectNode parse(Path file, String text) {
        if (text == null || text.isBlank()) {
            return JSON.createObjectNode();
        }
        JsonNode root;
        try {
            root = JsoncSplice.hasComments(text) ? JSON.readTree(JsoncSplice.COMMENTED.createParser(text))
                    : JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new HookConfigException(file + " is not JSON that Lifeline can edit safely (line "
                    + e.getLocation().getLineNr() + ": " + e.getOriginalMessage() + "); fix it or add the hooks by "
                    + "hand: nothing was written");
        } catch (IOException e) {
            throw new HookConfigException("cannot read " + file + ": " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new HookConfigException(file + " does not hold a JSON object: nothing was written");
        }
        return (ObjectNode) root;
    }

    static String render(JsonNode root) {
        try {
            return JSON.writer(PRETTY).writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Takes every Lifeline handler out of {@code root}'s hooks and puts {@code wanted} (event to handler) in; a
     * handler already there exactly as wanted stays where it is. Groups, events and the hooks object that only
     * Lifeline's handlers filled go with them. Says what changed in {@code summary}.
     */
    static void merge(Path file, ObjectNode root, Map<String, ObjectNode> wanted, List<String> summary) {
        JsonNode hooksNode = root.get("hooks");
        if (hooksNode == null || hooksNode.isNull()) {
            if (wanted.isEmpty()) {
                return;
            }
            hooksNode = root.putObject("hooks");
        }
        if (!hooksNode.isObject()) {
            throw new HookConfigException(file + ": \"hooks\" is not an object: nothing was written");
        }
        ObjectNode hooks = (ObjectNode) hooksNode;
        List<String> added = new ArrayList<>();
        List<String> replaced = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        int others = 0;
        boolean emptiedAny = false;
        for (String event : names(hooks)) {
            JsonNode groups = hooks.get(event);
            ObjectNode want = wanted.get(event);
            if (!groups.isArray()) {
                if (want != null) {
                    throw new HookConfigException(file + ": hooks." + event + " is not a list: nothing was written");
                }
                continue;
            }
            List<JsonNode> ours = new ArrayList<>();
            for (JsonNode group : groups) {
                for (JsonNode h : group.path("hooks")) {
                    if (HookTarget.isLifelines(h)) {
                        ours.add(h);
                    } else {
                        others++;
                    }
                }
            }
            if (want != null && ours.size() == 1 && ours.get(0).equals(want)) {
                kept.add(event);
                continue;
            }
            if (!ours.isEmpty()) {
                removeLifelines((ArrayNode) groups);
                if (groups.isEmpty()) {
                    hooks.remove(event);
                    emptiedAny = true;
                }
            }
            if (want != null) {
                ArrayNode list = hooks.has(event) ? (ArrayNode) hooks.get(event) : hooks.putArray(event);
                list.addObject().set("hooks", JSON.createArrayNode().add(want.deepCopy()));
                (ours.isEmpty() ? added : replaced).add(event);
            } else if (!ours.isEmpty()) {
                removed.add(event);
            }
        }
        for (Map.Entry<String, ObjectNode> e : wanted.entrySet()) {
            if (!hooks.has(e.getKey())) {
                hooks.putArray(e.getKey()).addObject().set("hooks", JSON.createArrayNode().add(e.getValue().deepCopy()));
                added.add(e.getKey());
            }
        }
        if (hooks.isEmpty() && emptiedAny) {
            root.remove("hooks");
        }
        List<String> order = new ArrayList<>(wanted.keySet());
        for (List<String> list : List.of(added, replaced, kept)) {
            list.sort(Comparator.comparingInt(order::indexOf));
        }
        say(summary, "added Lifeline's hook for", added);
        say(summary, "replaced Lifeline's hook for", replaced);
        say(summary, "already installed:", kept);
        say(summary, "removed Lifeline's hook for", removed);
        if (others > 0) {
            summary.add("kept " + others + " other hook" + (others == 1 ? "" : "s") + " as they were");
        }
    }

    private static void removeLifelines(ArrayNode groups) {
        for (Iterator<JsonNode> g = groups.elements(); g.hasNext(); ) {
            JsonNode group = g.next();
            JsonNode handlers = group.path("hooks");
            if (!handlers.isArray()) {
                continue;
            }
            boolean removedHere = false;
            for (Iterator<JsonNode> h = handlers.elements(); h.hasNext(); ) {
                if (HookTarget.isLifelines(h.next())) {
                    h.remove();
                    removedHere = true;
                }
            }
            if (removedHere && handlers.isEmpty()) {
                g.remove();
            }
        }
    }

    private static void say(List<String> summary, String what, List<String> events) {
        if (!events.isEmpty()) {
            summary.add(what + " " + String.join(", ", events));
        }
    }

    private static List<String> names(ObjectNode node) {
        List<String> list = new ArrayList<>();
        node.fieldNames().forEachRemaining(list::add);
        return list;
    }

    /**
     * The change to one JSON settings file: merge {@code wanted} into it (an empty map takes Lifeline's entries out),
     * keeping its text untouched when nothing changes; a file left as an empty object is deleted.
     */
    static FileChange change(Path file, Map<String, ObjectNode> wanted) {
        String before = read(file);
        ObjectNode root = parse(file, before);
        ObjectNode original = root.deepCopy();
        List<String> summary = new ArrayList<>();
        merge(file, root, wanted, summary);
        String after;
        if (root.equals(original)) {
            after = before;
        } else if (before != null && JsoncSplice.hasComments(before)) {
            after = JsoncSplice.edit(before, original, root, file.toString()); // its comments kept
            summary.add("kept the file's comments and layout; only Lifeline's part was rewritten");
        } else if (root.isEmpty() && wanted.isEmpty()) {
            after = null;
            summary.add("the file held nothing else: deleted");
        } else {
            after = render(root);
        }
        if (before == null && wanted.isEmpty()) {
            summary.add("no such file: nothing to remove");
        } else if (summary.isEmpty()) {
            summary.add("no Lifeline hooks in it: nothing to remove");
        }
        return new FileChange(file, before, after, summary);
    }

    static Map<String, ObjectNode> each(List<String> events, Function<String, ObjectNode> handler) {
        Map<String, ObjectNode> m = new LinkedHashMap<>();
        for (String e : events) {
            m.put(e, handler.apply(e));
        }
        return m;
    }
}
