package io.lifeline.client.hooks;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON settings file with comments ({@code //} and {@code /* *}{@code /}, which Gemini CLI accepts in its
 * settings.json), edited in place: the text of every member that did not change is kept as it was, comments and
 * layout included, and only what changed is written anew. Objects are compared member by member (so a comment
 * beside the user's own hooks event stays); a changed value that is not an object is replaced whole, and is refused
 * when comments inside it would be lost. The result is parsed again and must equal the wanted tree, or nothing is
 * written.
 *
 * <p>No library on hand keeps comments through an edit (Jackson's {@code ALLOW_JAVA_COMMENTS} reads them and drops
 * them): this is the small splice the installer needs, on the streaming parser's character offsets.
 */
final class JsoncSplice {
    static final JsonFactory COMMENTED = JsonFactory.builder().enable(JsonReadFeature.ALLOW_JAVA_COMMENTS).build();

    private JsoncSplice() {
    }

    /** Where one member is in the text: its name's first character, its value's first and one past its last. */
    private record Member(int nameStart, int valueStart, int valueEnd, Span object) {
    }

    /** An object's text: its braces, and its members in order. */
    private record Span(int open, int close, Map<String, Member> members) {
    }

    /** One replacement of [from, to) by {@code text}. */
    private record Edit(int from, int to, String text) {
    }

    /** Whether {@code text} holds a comment outside its strings. */
    static boolean hasComments(String text) {
        return commentAt(text, 0, text.length()) >= 0;
    }

    /** {@code before} (with comments) made to hold {@code wanted}, keeping the text of what did not change. */
    static String edit(String before, ObjectNode original, ObjectNode wanted, String where) {
        Span root;
        try (JsonParser p = COMMENTED.createParser(before)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new HookConfigException(where + " does not hold a JSON object: nothing was written");
            }
            root = object(p);
        } catch (IOException e) {
            throw new HookConfigException(where + " cannot be read: " + e.getMessage());
        }
        List<Edit> edits = new ArrayList<>();
        object(before, root, original, wanted, "", edits, where);
        StringBuilder out = new StringBuilder(before);
        edits.sort((a, b) -> Integer.compare(b.from(), a.from()));
        for (Edit e : edits) {
            out.replace(e.from(), e.to(), e.text());
        }
        String after = out.toString();
        try {
            JsonNode again = HooksJson.JSON.readTree(COMMENTED.createParser(after));
            if (!wanted.equals(again)) {
                throw new HookConfigException(where + ": the edit that keeps its comments did not give the settings "
                        + "wanted; add the hooks by hand: nothing was written");
            }
        } catch (IOException e) {
            throw new HookConfigException(where + ": the edit that keeps its comments is not JSON (" + e.getMessage()
                    + "); add the hooks by hand: nothing was written");
        }
        return after;
    }

    private static Span object(JsonParser p) throws IOException {
        int open = (int) p.currentTokenLocation().getCharOffset();
        Map<String, Member> members = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            int nameStart = (int) p.currentTokenLocation().getCharOffset();
            JsonToken value = p.nextToken();
            int valueStart = (int) p.currentTokenLocation().getCharOffset();
            Span child = null;
            int valueEnd;
            if (value == JsonToken.START_OBJECT) {
                child = object(p);
                valueEnd = child.close() + 1;
            } else if (value == JsonToken.START_ARRAY) {
                p.skipChildren();
                valueEnd = (int) p.currentTokenLocation().getCharOffset() + 1;
            } else {
                p.finishToken();
                valueEnd = (int) p.currentLocation().getCharOffset();
            }
            members.put(name, new Member(nameStart, valueStart, valueEnd, child));
        }
        return new Span(open, (int) p.currentTokenLocation().getCharOffset(), members);
    }

    private static void object(String text, Span span, JsonNode was, JsonNode wanted, String path, List<Edit> edits,
                               String where) {
        String indent = indentOf(text, span);
        Member last = null;
        commas(text, span, wanted, edits);
        for (Map.Entry<String, Member> e : span.members().entrySet()) {
            String name = e.getKey();
            Member m = e.getValue();
            JsonNode before = was.get(name);
            JsonNode after = wanted.get(name);
            if (after == null) {
                edits.add(new Edit(lineBreakBefore(text, m.nameStart()), m.valueEnd(), "")); // comments stay
                continue;
            }
            last = m;
            if (after.equals(before)) {
                continue;
            }
            if (m.object() != null && after.isObject()) {
                object(text, m.object(), before, after, path + name + ".", edits, where);
                continue;
            }
            if (commentAt(text, m.valueStart(), m.valueEnd()) >= 0) {
                throw new HookConfigException(where + ": " + path + name + " has comments inside, which Lifeline's "
                        + "change would lose; add the hooks by hand: nothing was written");
            }
            edits.add(new Edit(m.valueStart(), m.valueEnd(), render(after, indent)));
        }
        StringBuilder added = new StringBuilder();
        for (Map.Entry<String, JsonNode> e : iterable(wanted)) {
            if (!span.members().containsKey(e.getKey())) {
                added.append(added.length() > 0 || last != null ? "," : "").append('\n').append(indent)
                        .append(HooksJson.JSON.valueToTree(e.getKey()).toString()).append(": ")
                        .append(render(e.getValue(), indent));
            }
        }
        if (added.length() > 0) {
            int at = last != null ? last.valueEnd() : span.open() + 1;
            edits.add(new Edit(at, at, added + (last != null ? "" : "\n" + indent.substring(Math.min(2,
                    indent.length())))));
        }
    }

    /**
     * The commas between members once the removed ones are gone: the comma before a kept member stays when a kept
     * member comes earlier; every other one goes (members added later bring their own).
     */
    private static void commas(String text, Span span, JsonNode wanted, List<Edit> edits) {
        List<Member> members = new ArrayList<>(span.members().values());
        List<Boolean> kept = new ArrayList<>();
        span.members().keySet().forEach(name -> kept.add(wanted.has(name)));
        boolean keptBefore = false;
        for (int i = 0; i + 1 < members.size(); i++) {
            keptBefore |= kept.get(i);
            int comma = skip(text, members.get(i).valueEnd(), members.get(i + 1).nameStart());
            if (text.charAt(comma) == ',' && !(keptBefore && kept.get(i + 1))) {
                edits.add(new Edit(comma, comma + 1, ""));
            }
        }
    }

    /** {@code at}, or the line break before it when only indentation stands between (its line goes with it). */
    private static int lineBreakBefore(String text, int at) {
        int i = at;
        while (i > 0 && (text.charAt(i - 1) == ' ' || text.charAt(i - 1) == '\t')) {
            i--;
        }
        return i > 0 && text.charAt(i - 1) == '\n' ? i - 1 : at;
    }

    /** The first index from {@code from} that is neither white space nor inside a comment (at most {@code to}). */
    private static int skip(String text, int from, int to) {
        int i = from;
        while (i < to) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (text.startsWith("//", i)) {
                int nl = text.indexOf('\n', i);
                i = nl < 0 ? to : nl + 1;
            } else if (text.startsWith("/*", i)) {
                int end = text.indexOf("*/", i + 2);
                i = end < 0 ? to : end + 2;
            } else {
                return i;
            }
        }
        return to;
    }

    /** Where a comment starts in [from, to), outside strings; -1 for none. */
    private static int commentAt(String text, int from, int to) {
        boolean inString = false;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '/' && i + 1 < to && (text.charAt(i + 1) == '/' || text.charAt(i + 1) == '*')) {
                return i;
            }
        }
        return -1;
    }

    /** The members' indentation: the first member's column's white space, else the brace's plus two spaces. */
    private static String indentOf(String text, Span span) {
        int at = span.members().isEmpty() ? span.open() : span.members().values().iterator().next().nameStart();
        int lineStart = text.lastIndexOf('\n', at - 1) + 1;
        String lead = text.substring(lineStart, at);
        String ws = lead.isBlank() ? lead : lead.replaceAll("\\S.*", "");
        return span.members().isEmpty() ? ws + "  " : ws;
    }

    /** {@code value} as the installer writes it, its later lines indented to sit at {@code indent}. */
    private static String render(JsonNode value, String indent) {
        String text = HooksJson.render(value).stripTrailing();
        return text.replace("\n", "\n" + indent);
    }

    private static Iterable<Map.Entry<String, JsonNode>> iterable(JsonNode node) {
        return node::fields;
    }
}
