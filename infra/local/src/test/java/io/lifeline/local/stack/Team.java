package io.lifeline.local.stack;

import static io.lifeline.local.stack.TestStack.ok;

import io.lifeline.auth.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A team of a fleet-sized test: its admin key, and its agents registered and joined through the API. */
public record Team(String name, String key, List<String> agents) {

    /** Team {@code name} with {@code agents} agents, {@code name-a1} onward, registered and joined. */
    public static Team team(TestStack s, String name, int agents) {
        String key = s.key(name, Scope.ADMIN);
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= agents; i++) {
            String id = name + "-a" + i;
            ok(s.send("register", key, Map.of("team", name), null,
                    "{\"agentId\":\"" + id + "\",\"name\":\"" + id + "\",\"role\":\"worker\"}"));
            ok(s.send("join", key, Map.of("team", name, "agentId", id), null, null));
            ids.add(id);
        }
        return new Team(name, key, ids);
    }
}
