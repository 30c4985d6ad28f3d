package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import io.lifeline.client.RetryPolicy;
import io.lifeline.client.Sleeper;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * Connection options, on every command. Each setting comes from its flag, else its environment variable, else
 * the config file ({@link ConfigFile}), else a default.
 */
public final class GlobalOptions {
    static final String DEFAULT_URL = "http://127.0.0.1:8787";
    static final String DEFAULT_TEAM = "local";

    @Option(names = "--url", description = "Lifeline's URL (env LIFELINE_URL, config url; default " + DEFAULT_URL + ")")
    String url;

    @Option(names = "--heartbeat-url", description = "Where heartbeats go, when the deployment has a heartbeat URL "
            + "(stack output HeartbeatUrl; env LIFELINE_HEARTBEAT_URL, config heartbeat_url; default: --url)")
    String heartbeatUrl;

    @Option(names = "--team", description = "The team (env LIFELINE_TEAM, config team; default " + DEFAULT_TEAM + ")")
    String team;

    @Option(names = "--key", description = "API key (env LIFELINE_API_KEY or LIFELINE_KEY, config api_key)")
    String key;

    @Option(names = "--config", paramLabel = "PATH", description = "Config file (default "
            + "$XDG_CONFIG_HOME/lifeline/config, else ~/.config/lifeline/config)")
    Path config;

    @Option(names = "--json", description = "Print the server's answer as JSON")
    boolean json;

    private ConfigFile file;

    /** Reads the config file once; a missing default file is no file, anything else wrong is an error. */
    ConfigFile file(Map<String, String> env) {
        if (file == null) {
            file = config != null ? ConfigFile.read(config, true) : ConfigFile.read(ConfigFile.defaultPath(env), false);
        }
        return file;
    }

    String url(Map<String, String> env) {
        return first(url, env.get("LIFELINE_URL"), file(env).get("url"), DEFAULT_URL);
    }

    /** The heartbeat URL, or null: heartbeats then go to {@link #url}. */
    String heartbeatUrl(Map<String, String> env) {
        return first(heartbeatUrl, env.get("LIFELINE_HEARTBEAT_URL"), file(env).get("heartbeat_url"));
    }

    String team(Map<String, String> env) {
        return first(team, env.get("LIFELINE_TEAM"), file(env).get("team"), DEFAULT_TEAM);
    }

    /** LIFELINE_API_KEY is the documented name; LIFELINE_KEY, the older one, still works. */
    String key(Map<String, String> env) {
        return first(key, env.get("LIFELINE_API_KEY"), env.get("LIFELINE_KEY"), file(env).get("api_key"));
    }

    /**
     * The operator key: {@code --operator-key} (given here by the command), LIFELINE_OPERATOR_KEY, the config
     * file's operator_key, or, for a Lifeline Local on this machine, {@code .lifeline/operator.key} under
     * {@code workDir} (Local's default data dir), which Local writes on its first start.
     */
    String operatorKey(String flag, Map<String, String> env, Path workDir) {
        String k = first(flag, env.get("LIFELINE_OPERATOR_KEY"), file(env).get("operator_key"));
        if (k != null || !isLoopback(url(env))) {
            return k;
        }
        Path local = workDir.resolve(".lifeline").resolve("operator.key");
        try {
            return Files.isReadable(local) ? first(Files.readString(local).trim()) : null;
        } catch (IOException e) {
            return null;
        }
    }

    private static boolean isLoopback(String url) {
        try {
            String host = URI.create(url).getHost();
            return "127.0.0.1".equals(host) || "localhost".equals(host) || "[::1]".equals(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    LifelineClient client(Map<String, String> env, Sleeper sleeper) {
        return client(env, sleeper, team(env), key(env));
    }

    LifelineClient client(Map<String, String> env, Sleeper sleeper, String teamId, String apiKey) {
        return client(env, sleeper, teamId, apiKey, null);
    }

    /** {@code onRetry} hears, at once, why a call is retried and when (null: silent). */
    LifelineClient client(Map<String, String> env, Sleeper sleeper, String teamId, String apiKey,
                          Consumer<String> onRetry) {
        return client(env, sleeper, teamId, apiKey, onRetry, false);
    }

    /** {@code readsFailFast}: a read that finds nobody at the URL fails at once (a command a person waits for). */
    LifelineClient client(Map<String, String> env, Sleeper sleeper, String teamId, String apiKey,
                          Consumer<String> onRetry, boolean readsFailFast) {
        return client(env, sleeper, teamId, apiKey, onRetry, readsFailFast, RetryPolicy.defaults());
    }

    /** {@code retry}: the SDK's retries ({@link RetryPolicy#defaults}; the daemon's are per round). */
    LifelineClient client(Map<String, String> env, Sleeper sleeper, String teamId, String apiKey,
                          Consumer<String> onRetry, boolean readsFailFast, RetryPolicy retry) {
        String u = url(env);
        String beats = heartbeatUrl(env);
        if (beats != null) {
            try {
                URI.create(beats);
            } catch (IllegalArgumentException e) {
                throw new ConfigFile.ConfigException("not a URL: '" + beats + "'");
            }
        }
        try {
            return LifelineClient.builder().url(u).heartbeatUrl(beats).team(teamId).apiKey(apiKey).sleeper(sleeper)
                    .onRetry(onRetry).readsFailFast(readsFailFast).retry(retry).build();
        } catch (IllegalArgumentException e) {
            throw new ConfigFile.ConfigException("not a URL: '" + u + "'");
        }
    }

    static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
