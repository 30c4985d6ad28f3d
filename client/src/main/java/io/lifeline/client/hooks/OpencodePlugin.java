package io.lifeline.client.hooks;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The opencode plugin {@code lifeline hooks install opencode} writes: an in-process JS module that posts each
 * relevant bus event and tool call to Lifeline with {@code fetch}, reduced to its type, session id, status and error
 * (never a title, prompt, message, tool input or output). No node process per event; the API key is read from the
 * environment when an event is sent.
 */
final class OpencodePlugin {
    /** Bus events forwarded: a session's start, busy/idle, its turn's end, errors, permission prompts, compaction, end. */
    static final List<String> EVENTS = List.of("session.created", "session.status", "session.idle", "session.error",
            "permission.asked", "permission.updated", "permission.replied", "session.compacted", "session.deleted",
            "server.instance.disposed");

    private OpencodePlugin() {
    }

    static String source(HookTarget t) {
        String url = t.viaDaemon()
                ? "process.env." + HookTarget.DAEMON_ENV + " ? process.env." + HookTarget.DAEMON_ENV + " + \""
                        + t.daemonPath() + "\" : null"
                : "\"" + t.directUrl() + "\"";
        String key = t.viaDaemon() ? "" : """
                  const key = process.env.%s || process.env.%s;
                  if (key) headers["Authorization"] = "Bearer " + key;
                """.formatted(HookTarget.KEY_ENV, HookTarget.OLD_KEY_ENV);
        return """
                // Lifeline's liveness plugin for agent %s, written by `%s`; `lifeline hooks uninstall
                // opencode` deletes it. It posts opencode's session events to Lifeline reduced to their type, session
                // id, status and error: never a title, prompt, message, tool input or output. The API key is read from
                // %s (or the older %s) each time; it is never written here.
                const AGENT = "%s";
                const EVENTS = new Set([%s]);

                async function post(type, p) {
                  const url = %s;
                  if (!url) return;
                  const properties = {};
                  const sessionID = p?.sessionID ?? p?.info?.id;
                  if (sessionID) properties.sessionID = sessionID;
                  if (p?.status?.type) properties.status = { type: p.status.type };
                  if (p?.error) properties.error = { name: p.error.name, data: { message: p.error.data?.message } };
                  if (p?.tool) properties.tool = p.tool;
                  const headers = { "Content-Type": "application/json", "%s": AGENT };
                %s  try {
                    await fetch(url, { method: "POST", headers, body: JSON.stringify({ type, properties }),
                      signal: AbortSignal.timeout(2000) });
                  } catch {}
                }

                export const LifelinePlugin = async () => ({
                  event: async ({ event }) => {
                    if (EVENTS.has(event.type)) await post(event.type, event.properties);
                  },
                  "tool.execute.before": async (input) => post("tool.execute.before", { sessionID: input.sessionID, tool: input.tool }),
                  "tool.execute.after": async (input) => post("tool.execute.after", { sessionID: input.sessionID, tool: input.tool }),
                });
                """.formatted(t.agentId(), HookFiles.PLUGIN_MARK, HookTarget.KEY_ENV, HookTarget.OLD_KEY_ENV, t.agentId(),
                EVENTS.stream().map(e -> "\"" + e + "\"").collect(Collectors.joining(", ")), url,
                HookTarget.AGENT_HEADER, key);
    }
}
