package io.lifeline.client.hooks;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lifeline.client.files.AtomicFiles;
import io.lifeline.hooks.HookRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code lifeline hooks install|uninstall}: Lifeline's hooks merged into (or taken out of) a runtime's own settings
 * files. Idempotent (a second install changes nothing), every other key and hook kept as it was, the API key never
 * written: each forwarder reads {@value HookTarget#KEY_ENV} from the runtime's environment when it runs.
 * {@link #install} and {@link #uninstall} only compute the changes; {@link #apply} writes them.
 */
public final class HookFiles {
    /** A runtime's settings are the user's file: old or new bytes, never a mix, durable, and as readable as before. */
    private static final AtomicFiles.Options WRITE = AtomicFiles.Options.of().forced().directoryForced()
            .keepingPermissions();

    /** Claude Code: SessionStart as a command hook (HTTP hooks are not run for it), the rest as HTTP hooks. */
    static final List<String> CLAUDE_EVENTS = List.of("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
            "PostToolUseFailure", "SubagentStart", "SubagentStop", "PermissionRequest", "Notification", "Stop",
            "StopFailure", "PreCompact", "SessionEnd");
    /** Codex CLI hooks.json (command hooks only); turn ends also come through config.toml's notify. */
    static final List<String> CODEX_EVENTS = List.of("SessionStart", "UserPromptSubmit", "PreToolUse",
            "PermissionRequest", "PostToolUse", "PreCompact", "Stop", "SessionEnd");
    /**
     * Gemini CLI: not BeforeModel, AfterModel or BeforeToolSelection (they carry the whole model request or answer
     * and fire several times a turn; Gemini runs hooks synchronously).
     */
    static final List<String> GEMINI_EVENTS = List.of("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool",
            "Notification", "PreCompress", "AfterAgent", "SessionEnd");
    /** Seconds a Claude Code or Codex hook may take (curl gives up after 2); Codex caps SessionEnd's at 3. */
    static final int TIMEOUT_SECONDS = 3;
    static final String NOTIFY_MARK = "lifeline-notify";
    static final String PLUGIN_FILE = "lifeline.js";
    static final String PLUGIN_MARK = "lifeline hooks install opencode";

    private HookFiles() {
    }

    /** Where a runtime's settings are: a project's directory, or the user's (null project) found from {@code env}. */
    public record Scope(Path projectDir, Map<String, String> env) {
        public Scope {
            env = Map.copyOf(env);
        }

        public static Scope project(Path dir, Map<String, String> env) {
            return new Scope(dir, env);
        }

        public static Scope user(Map<String, String> env) {
            return new Scope(null, env);
        }

        boolean user() {
            return projectDir == null;
        }

        private Path home() {
            String h = env.get("HOME");
            return Path.of(h == null || h.isBlank() ? System.getProperty("user.home") : h);
        }

        private Path fromEnv(String name, Path otherwise) {
            String v = env.get(name);
            return v == null || v.isBlank() ? otherwise : Path.of(v);
        }

        Path claudeSettings() {
            return user() ? fromEnv("CLAUDE_CONFIG_DIR", home().resolve(".claude")).resolve("settings.json")
                    : projectDir.resolve(".claude").resolve("settings.local.json");
        }

        Path codexDir() {
            return user() ? fromEnv("CODEX_HOME", home().resolve(".codex")) : projectDir.resolve(".codex");
        }

        Path geminiSettings() {
            return (user() ? home() : projectDir).resolve(".gemini").resolve("settings.json");
        }

        Path opencodePlugin() {
            Path dir = user() ? fromEnv("XDG_CONFIG_HOME", home().resolve(".config")).resolve("opencode")
                    : projectDir.resolve(".opencode");
            return dir.resolve("plugins").resolve(PLUGIN_FILE);
        }
    }

    /** The files {@code target}'s hooks need, changed as they would be; nothing is written. */
    public static List<FileChange> install(HookTarget target, Scope scope) {
        return switch (target.runtime()) {
            case CLAUDE_CODE -> List.of(HooksJson.change(scope.claudeSettings(),
                    HooksJson.each(CLAUDE_EVENTS, e -> claudeHandler(target, e))));
            // Codex 0.171.0 runs notify from the user's config.toml only (a project's is read, its notify not run).
            case CODEX -> scope.user() ? List.of(HooksJson.change(scope.codexDir().resolve("hooks.json"),
                    HooksJson.each(CODEX_EVENTS, e -> command(target, e, TIMEOUT_SECONDS))),
                    notify(scope.codexDir().resolve("config.toml"), target))
                    : List.of(HooksJson.change(scope.codexDir().resolve("hooks.json"),
                    HooksJson.each(CODEX_EVENTS, e -> command(target, e, TIMEOUT_SECONDS))));
            case GEMINI -> List.of(HooksJson.change(scope.geminiSettings(),
                    HooksJson.each(GEMINI_EVENTS, e -> geminiHandler(target, e))));
            case OPENCODE -> List.of(plugin(scope.opencodePlugin(), OpencodePlugin.source(target)));
        };
    }

    /** The files holding {@code runtime}'s Lifeline hooks in {@code scope}, with only those taken out. */
    public static List<FileChange> uninstall(HookRuntime runtime, Scope scope) {
        return switch (runtime) {
            case CLAUDE_CODE -> List.of(HooksJson.change(scope.claudeSettings(), Map.of()));
            case CODEX -> List.of(HooksJson.change(scope.codexDir().resolve("hooks.json"), Map.of()),
                    notify(scope.codexDir().resolve("config.toml"), null));
            case GEMINI -> List.of(HooksJson.change(scope.geminiSettings(), Map.of()));
            case OPENCODE -> List.of(plugin(scope.opencodePlugin(), null));
        };
    }

    /** Writes each changed file (atomically, creating its folder) or deletes it. */
    public static void apply(List<FileChange> changes) throws IOException {
        for (FileChange c : changes) {
            if (!c.changed()) {
                continue;
            }
            if (c.after() == null) {
                Files.deleteIfExists(c.file());
            } else {
                Files.createDirectories(c.file().toAbsolutePath().getParent());
                AtomicFiles.write(c.file(), c.after(), WRITE);
            }
        }
    }

    static ObjectNode claudeHandler(HookTarget target, String event) {
        if (target.viaDaemon() || event.equals("SessionStart")) {
            return command(target, event, TIMEOUT_SECONDS);
        }
        ObjectNode h = HooksJson.handler().put("type", "http").put("url", target.directUrl());
        h.putObject("headers").put("Authorization", "Bearer $" + HookTarget.KEY_ENV)
                .put(HookTarget.AGENT_HEADER, target.agentId());
        h.putArray("allowedEnvVars").add(HookTarget.KEY_ENV);
        return h.put("timeout", TIMEOUT_SECONDS);
    }

    /** A command hook: the curl forwarder; for the session's start, with the watcher of the runtime's process. */
    static ObjectNode command(HookTarget target, String event, int timeout) {
        return HooksJson.handler().put("type", "command").put("command", forwarder(target, event))
                .put("timeout", timeout);
    }

    private static String forwarder(HookTarget target, String event) {
        return "SessionStart".equals(event) ? target.sessionStartFromStdin() : target.curlFromStdin();
    }

    /** Gemini CLI's timeout is in milliseconds; {@code name} lets {@code hooksConfig.disabled} turn it off. */
    static ObjectNode geminiHandler(HookTarget target, String event) {
        return HooksJson.handler().put("name", "lifeline").put("type", "command")
                .put("command", forwarder(target, event)).put("timeout", TIMEOUT_SECONDS * 1000)
                .put("description", "Lifeline liveness (lifeline hooks install gemini)");
    }

    private static final Pattern TABLE = Pattern.compile("^\\s*\\[.*");
    private static final Pattern NOTIFY = Pattern.compile("^\\s*notify\\s*=.*");

    /**
     * Codex's config.toml {@code notify}: one top-level line, marked {@value #NOTIFY_MARK}. Codex runs one notify
     * program, so a notify the user set is left alone (turn ends still arrive through the Stop hook).
     */
    static FileChange notify(Path file, HookTarget target) {
        String before = HooksJson.read(file);
        List<String> lines = new ArrayList<>(before == null ? List.of() : List.of(before.split("\n", -1)));
        int ours = -1;
        int other = -1;
        for (int i = 0; i < lines.size() && !TABLE.matcher(lines.get(i)).matches(); i++) {
            if (NOTIFY.matcher(lines.get(i)).matches()) {
                if (lines.get(i).contains(NOTIFY_MARK)) {
                    ours = i;
                } else {
                    other = i;
                }
            }
        }
        List<String> summary = new ArrayList<>();
        if (target == null) {
            if (ours >= 0) {
                lines.remove(ours);
                summary.add("removed Lifeline's notify");
            } else {
                summary.add(before == null ? "no such file: nothing to remove" : "no Lifeline notify in it: nothing to remove");
            }
        } else {
            String line = "notify = [" + toml("sh") + ", " + toml("-c") + ", " + toml(target.curlFromFirstArgument())
                    + ", " + toml(NOTIFY_MARK) + "]";
            if (ours >= 0 && lines.get(ours).equals(line)) {
                summary.add("already installed: notify (turn ends)");
            } else if (ours >= 0) {
                lines.set(ours, line);
                summary.add("replaced Lifeline's notify (turn ends)");
            } else if (other >= 0) {
                summary.add("left the notify program already set here alone (Codex runs one): turn ends still come "
                        + "through the Stop hook");
            } else {
                if (lines.isEmpty()) {
                    lines.add("");
                }
                lines.add(0, line);
                summary.add("added notify (turn ends; Codex runs it whether or not its hooks are trusted)");
            }
        }
        String after = before;
        if (target != null || ours >= 0) {
            after = String.join("\n", lines);
            if (target == null && after.isBlank()) {
                after = null;
                summary.add("the file held nothing else: deleted");
            }
        }
        return new FileChange(file, before, after != null && after.equals(before) ? before : after, summary);
    }

    /** A TOML basic string. */
    static String toml(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\u%04X", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** opencode's plugin file is Lifeline's alone: written whole, and deleted only when it carries the mark. */
    static FileChange plugin(Path file, String source) {
        String before = HooksJson.read(file);
        if (before != null && !before.contains(PLUGIN_MARK)) {
            throw new HookConfigException(file + " exists and was not written by lifeline hooks install: nothing "
                    + "was written");
        }
        List<String> summary = new ArrayList<>();
        if (source == null) {
            summary.add(before == null ? "no such file: nothing to remove" : "deleted Lifeline's plugin");
        } else if (source.equals(before)) {
            summary.add("already installed: Lifeline's plugin");
        } else {
            summary.add((before == null ? "added" : "replaced") + " Lifeline's plugin (session status, idle, errors, "
                    + "permissions, compaction and tool calls)");
        }
        return new FileChange(file, before, source, summary);
    }
}
