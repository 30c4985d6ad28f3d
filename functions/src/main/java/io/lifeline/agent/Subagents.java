package io.lifeline.agent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * An agent's running subagents as the server shows them: at most {@link #MAX} entries (id, type, since), the rest
 * only counted in {@code more}. Only ids, types and start times: never a subagent's prompt, messages or transcript.
 * A change gives a new set, or this one when nothing changed (a repeated start, the stop of an unknown id), so a
 * caller writes only on a change.
 */
public record Subagents(List<Entry> running, int more) {
    /** The most subagents kept by id; further ones are counted. */
    public static final int MAX = 8;
    /** The longest id or type accepted. */
    public static final int MAX_TEXT = 128;
    /** No subagent running. */
    public static final Subagents NONE = new Subagents(List.of(), 0);

    /** One running subagent: its runtime's id, its type (may be null) and since when it runs. */
    public record Entry(String id, String type, Instant since) {
        public Entry {
            checkText("subagent id", id, true);
            checkText("subagent type", type, false);
            if (since == null) {
                throw LifelineException.badInput("INVALID_FIELD", "a subagent needs its start time");
            }
        }
    }

    public Subagents {
        running = List.copyOf(running);
        if (running.size() > MAX || more < 0) {
            throw LifelineException.badInput("INVALID_FIELD",
                    "at most " + MAX + " subagents by id, and a count of the rest that is not negative");
        }
    }

    /** True when none runs. */
    public boolean isEmpty() {
        return running.isEmpty() && more == 0;
    }

    /** With {@code e} started: kept by id while there is room, else counted; unchanged when its id runs already. */
    public Subagents started(Entry e) {
        if (running.stream().anyMatch(r -> r.id().equals(e.id()))) {
            return this;
        }
        if (running.size() >= MAX) {
            return new Subagents(running, more + 1);
        }
        List<Entry> next = new ArrayList<>(running);
        next.add(e);
        return new Subagents(next, more);
    }

    /**
     * With the subagent {@code id} stopped: removed when kept by id; else one fewer counted (a stop of a counted one);
     * unchanged when nothing is counted either.
     */
    public Subagents stopped(String id) {
        List<Entry> next = new ArrayList<>(running);
        if (next.removeIf(r -> r.id().equals(id))) {
            return new Subagents(next, more);
        }
        return more > 0 ? new Subagents(running, more - 1) : this;
    }

    /** Refuses a missing (when {@code required}), blank, too long or control-character text. */
    public static void checkText(String what, String text, boolean required) {
        if (text == null) {
            if (required) {
                throw LifelineException.badInput("INVALID_FIELD", "'" + what + "' is required");
            }
            return;
        }
        if (text.isBlank() || text.length() > MAX_TEXT || text.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw LifelineException.badInput("INVALID_FIELD", "'" + what + "' must be 1 to " + MAX_TEXT
                    + " printable characters");
        }
    }
}
