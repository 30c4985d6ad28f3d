package io.lifeline.client.daemon;

import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A coding-agent runtime the daemon can run as an agent's command ({@code lifeline daemon --runtime ID=NAME}): its
 * hooks post to the daemon ({@code LIFELINE_DAEMON}, {@code LIFELINE_AGENT_ID}), and a restart resumes the session
 * the hooks last named, with the runtime's own resume option:
 * <ul>
 * <li>{@code claude-code}: {@code claude ... --resume <session_id>} (Claude Code's {@code -r, --resume [value]});</li>
 * <li>{@code codex}: {@code codex resume <session_id> ...}, and {@code codex exec resume <session_id> ...} for a
 * headless {@code codex exec} (Codex CLI's {@code resume [SESSION_ID] [PROMPT]} subcommands);</li>
 * <li>{@code gemini}: {@code gemini ... --resume <session_id>} (Gemini CLI's {@code -r, --resume} takes "latest", an
 * index or a session's UUID);</li>
 * <li>{@code opencode}: {@code opencode ... --session <session_id>} ({@code opencode} and {@code opencode run} take
 * {@code -s, --session}).</li>
 * </ul>
 * A command that names {@value #RESUME_ENV} gets the resume words in that variable instead (empty on a first
 * start) and is otherwise run as written, e.g. {@code script -qfc "claude $LIFELINE_RESUME_ARGS" /dev/null} under a
 * terminal; any other has the words added where the runtime takes them.
 */
public enum AgentRuntime {
    CLAUDE_CODE("claude-code", "claude"),
    CODEX("codex", "codex"),
    GEMINI("gemini", "gemini"),
    OPENCODE("opencode", "opencode");

    /** The variable that holds the resume words on a restart. */
    public static final String RESUME_ENV = "LIFELINE_RESUME_ARGS";
    /**
     * The variable that holds the prompt a resumed session is given ({@code continue}), for a command that names it
     * (e.g. {@code claude -p "${LIFELINE_RESUME_PROMPT:-do the task}"}); unset on a first start.
     */
    public static final String RESUME_PROMPT_ENV = "LIFELINE_RESUME_PROMPT";
    /** A session id the daemon puts on a command line: a runtime's ids are UUIDs or {@code ses_...} words. */
    private static final Pattern SESSION = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");
    /**
     * Codex's program word and its {@code exec} (or {@code e}), each as a word of its own, bare or quoted (a command
     * written {@code '/path/to/codex' 'exec' ...}): the resume words go right after them.
     */
    private static final Pattern CODEX_WORDS = Pattern.compile(
            "(^|[\\s;&|(/'\"])codex['\"]?(?=[\\s;&|)]|$)(\\s+(['\"]?)(exec|e)\\3(?=[\\s;&|)]|$))?");

    private final String wire;
    private final String program;

    AgentRuntime(String wire, String program) {
        this.wire = wire;
        this.program = program;
    }

    /** Its name on the command line and in hook URLs ({@code claude-code}, {@code codex}, ...). */
    public String wire() {
        return wire;
    }

    public static Optional<AgentRuntime> fromWire(String name) {
        return Arrays.stream(values()).filter(r -> r.wire.equals(name)).findFirst();
    }

    /** Whether {@code id} can go on a command line as it is. */
    public static boolean validSession(String id) {
        return id != null && SESSION.matcher(id).matches();
    }

    /** The words that resume {@code session}: "--resume ID", "resume ID" (codex), "--session ID" (opencode). */
    public String resumeArgs(String session) {
        return switch (this) {
            case CLAUDE_CODE, GEMINI -> "--resume " + session;
            case CODEX -> "resume " + session;
            case OPENCODE -> "--session " + session;
        };
    }

    /**
     * {@code command} started again on {@code session}: as written when it names {@value #RESUME_ENV}, else with
     * the resume words added (codex: after the first {@code codex} word, or after its {@code exec}, quoted or not).
     */
    public String resumeCommand(String command, String session) {
        if (!validSession(session)) {
            return command;
        }
        String prompt = command.contains(RESUME_PROMPT_ENV) ? "export " + RESUME_PROMPT_ENV + "='continue'; " : "";
        return prompt + resumeWords(command, session);
    }

    /** {@code command} with the resume words for {@code session}, as {@link #resumeCommand} says. */
    private String resumeWords(String command, String session) {
        if (command.contains(RESUME_ENV)) {
            return "export " + RESUME_ENV + "='" + resumeArgs(session) + "'; " + command;
        }
        if (this != CODEX) {
            return command + " " + resumeArgs(session);
        }
        Matcher m = CODEX_WORDS.matcher(command);
        if (!m.find()) {
            return command + " " + resumeArgs(session); // not found: the best guess, at the end
        }
        return command.substring(0, m.end()) + " " + resumeArgs(session) + command.substring(m.end());
    }

    /** The program's usual name ({@code claude}, {@code codex}, {@code gemini}, {@code opencode}). */
    public String program() {
        return program;
    }
}
