package io.lifeline.client.cli;

import io.lifeline.client.LifelineClient;
import java.util.Map;
import picocli.CommandLine.Option;

/** Connection options, on every command. */
public final class GlobalOptions {
    @Option(names = "--url", description = "Lifeline's URL (env LIFELINE_URL; default http://127.0.0.1:8787)")
    String url;

    @Option(names = "--team", description = "The team (env LIFELINE_TEAM; default local)")
    String team;

    @Option(names = "--key", description = "API key (env LIFELINE_KEY or LIFELINE_API_KEY)")
    String key;

    @Option(names = "--json", description = "Print the server's answer as JSON")
    boolean json;

    String url(Map<String, String> env) {
        return first(url, env.get("LIFELINE_URL"), "http://127.0.0.1:8787");
    }

    String team(Map<String, String> env) {
        return first(team, env.get("LIFELINE_TEAM"), "local");
    }

    String key(Map<String, String> env) {
        return first(key, env.get("LIFELINE_KEY"), env.get("LIFELINE_API_KEY"));
    }

    LifelineClient client(Map<String, String> env, io.lifeline.client.Sleeper sleeper) {
        return LifelineClient.builder().url(url(env)).team(team(env)).apiKey(key(env)).sleeper(sleeper).build();
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
