package io.lifeline.client.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The CLI's config file: {@code name = value} lines (or {@code name: value}), {@code #} comments and blank lines.
 * Names: url, heartbeat_url, team, api_key (or key), operator_key, opencode_url (the opencode server that
 * {@code lifeline bridge opencode} follows and {@code lifeline daemon} bridges). A line that is none of these is an
 * error naming the line, so a typo never silently falls back to a default.
 */
final class ConfigFile {
    static final Set<String> NAMES = Set.of("url", "heartbeat_url", "team", "api_key", "key", "operator_key",
            "opencode_url");

    /** A config file that cannot be used: the CLI prints it and exits {@link LifelineCli#USAGE}. */
    static final class ConfigException extends RuntimeException {
        ConfigException(String message) {
            super(message);
        }
    }

    private final Map<String, String> values;

    private ConfigFile(Map<String, String> values) {
        this.values = values;
    }

    static final ConfigFile EMPTY = new ConfigFile(Map.of());

    /** {@code $XDG_CONFIG_HOME/lifeline/config}, else {@code $HOME/.config/lifeline/config}. */
    static Path defaultPath(Map<String, String> env) {
        String xdg = env.get("XDG_CONFIG_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "lifeline", "config");
        }
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return Path.of(home, ".config", "lifeline", "config");
    }

    /** {@code required}: a missing file is an error (it was named with --config) rather than no settings. */
    static ConfigFile read(Path path, boolean required) {
        if (!Files.exists(path)) {
            if (required) {
                throw new ConfigException("config file " + path + " does not exist");
            }
            return EMPTY;
        }
        List<String> lines;
        try {
            lines = List.of(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(Files.readAllBytes(path)))
                    .toString().split("\r?\n", -1));
        } catch (CharacterCodingException e) {
            throw new ConfigException("config file " + path + " is not UTF-8 text");
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + path + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()));
        }
        return new ConfigFile(parse(path, lines));
    }

    static Map<String, String> parse(Path path, List<String> lines) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int eq = line.indexOf('=');
            int colon = line.indexOf(':');
            int at = eq < 0 ? colon : colon < 0 ? eq : Math.min(eq, colon);
            String where = path + " line " + (i + 1);
            if (at <= 0) {
                throw new ConfigException(where + ": expected 'name = value', got '" + line + "'");
            }
            String name = line.substring(0, at).strip();
            String value = unquote(line.substring(at + 1).strip());
            if (value.isEmpty()) {
                // Silently falling back to the default (loopback) URL or no key would hide the mistake.
                throw new ConfigException(where + ": '" + name + "' has no value");
            }
            if (!NAMES.contains(name)) {
                throw new ConfigException(where + ": unknown setting '" + name + "' (known: url, heartbeat_url, team, "
                        + "api_key, key, operator_key, opencode_url)");
            }
            String canonical = name.equals("key") ? "api_key" : name;
            if (values.containsKey(canonical)) {
                throw new ConfigException(where + ": '" + name + "' is set twice");
            }
            values.put(canonical, value);
        }
        return values;
    }

    private static String unquote(String v) {
        if (v.length() >= 2 && (v.startsWith("\"") && v.endsWith("\"") || v.startsWith("'") && v.endsWith("'"))) {
            return v.substring(1, v.length() - 1);
        }
        return v;
    }

    /** A setting, or null when the file does not set it. */
    String get(String name) {
        return values.get(name);
    }
}
