package io.lifeline.client.heartbeatmd;

/**
 * A heartbeat.md that cannot be used. The message names the 1-based line and what is wrong, e.g.
 * {@code line 14: unknown priority [URGENT]; use CRITICAL, HIGH, MEDIUM, LOW or BG}.
 *
 * <p>{@link #corrupt()} separates a file that is not a heartbeat.md at all (empty, binary, no or unterminated
 * frontmatter, frontmatter that is not YAML: what a torn write or a broken disk leaves) from one that is a
 * heartbeat.md with a mistake in it (what a person's edit leaves). {@link Wake} restores the former from
 * {@code history/}; the latter is reported and the file left untouched, so a person's edit is never thrown away.
 */
public final class HeartbeatParseException extends RuntimeException {
    private final int line;
    private final String reason;
    private final boolean corrupt;

    HeartbeatParseException(int line, String reason, boolean corrupt) {
        super("line " + line + ": " + reason);
        this.line = line;
        this.reason = reason;
        this.corrupt = corrupt;
    }

    static HeartbeatParseException invalid(int line, String reason) {
        return new HeartbeatParseException(line, reason, false);
    }

    static HeartbeatParseException corrupt(int line, String reason) {
        return new HeartbeatParseException(line, reason, true);
    }

    /** 1-based line number the problem was found on. */
    public int line() {
        return line;
    }

    /** What is wrong, without the line prefix. */
    public String reason() {
        return reason;
    }

    /** True when the file is not a heartbeat.md at all (recoverable from a backup), false for a field-level mistake. */
    public boolean corrupt() {
        return corrupt;
    }
}
