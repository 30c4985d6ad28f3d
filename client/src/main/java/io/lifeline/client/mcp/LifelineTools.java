package io.lifeline.client.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lifeline.client.LifelineApiException;
import io.lifeline.client.LifelineClient;
import io.lifeline.client.LifelineConnectionException;
import io.lifeline.client.LifelineException;
import io.lifeline.client.model.Heartbeat;
import io.lifeline.client.model.HeartbeatResult;
import io.lifeline.client.model.Stats;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Lifeline's MCP tools: the heartbeat protocol's {@code heartbeat} (its input, its output field for field, its error
 * table as tool results with {@code isError}) and the lifecycle around it. Each tool is one call of the Java SDK
 * ({@link LifelineClient}); the MCP layer only turns arguments into that call and its answer or refusal into a
 * tool result. A refusal is never a protocol error: a model reads {@code error} (and {@code rejoinRequired}) and
 * acts on it.
 */
public final class LifelineTools {
    /** The rejoin hint, the status model's self-healing told to a model. */
    static final String REJOIN_HINT = "Call the join tool with the same agentId and teamName, then heartbeat again.";

    private static final ObjectMapper JSON = LifelineClient.mapper();

    private final Function<String, LifelineClient> clients;
    private final String defaultTeam;

    /**
     * @param clients     a client for a team name (the URL and key are the server's settings)
     * @param defaultTeam the team a tool call means when it names none
     */
    public LifelineTools(Function<String, LifelineClient> clients, String defaultTeam) {
        this.clients = Objects.requireNonNull(clients);
        this.defaultTeam = Objects.requireNonNull(defaultTeam);
    }

    /** The names of the tools, in the order they are listed. */
    public static List<String> names() {
        return definitions().stream().map(ToolDef::name).toList();
    }

    private interface Handler {
        Object handle(Args a);
    }

    private record ToolDef(String name, String title, String description, String inputSchema, String outputSchema,
            boolean readOnly, boolean idempotent, Handler handler) {
    }

    /** Runs a tool: its answer as structured content (and the same JSON as text), or a refusal as isError. */
    CallToolResult call(ToolDef def, Args a) {
        if (def.name().equals("heartbeat")) {
            return heartbeat(a);
        }
        try {
            return ok(def.handler().handle(a));
        } catch (BadArgument e) {
            return failure(Map.of("success", false, "error", e.getMessage(), "code", "INVALID_ARGUMENT"));
        } catch (LifelineApiException e) {
            return failure(refusal(e));
        } catch (LifelineConnectionException e) {
            return failure(Map.of("success", false, "error", "Cannot reach Lifeline: " + e.getMessage(),
                    "code", "UNREACHABLE"));
        } catch (LifelineException e) {
            return failure(Map.of("success", false, "error", e.getMessage(), "code", "LIFELINE_ERROR"));
        }
    }

    /**
     * The heartbeat protocol's heartbeat: success answers {@code {success, heartbeatTs, nextDeadline, agentStatus}}; a
     * failure answers {@code {success: false, heartbeatTs: "", nextDeadline: "", agentStatus, error}} with its
     * error text, plus {@code rejoinRequired} and {@code hint} when joining again heals it.
     */
    CallToolResult heartbeat(Args a) {
        String agentId;
        String team;
        Heartbeat hb;
        try {
            agentId = a.required("agentId");
            team = a.required("teamName");
            hb = new Heartbeat(a.optional("status"), "tool", a.object("metadata"), stats(a.object("stats")),
                    a.object("checkpoint"), a.longValue("nextHeartbeatWithinSeconds"));
        } catch (BadArgument e) {
            return failure(heartbeatFailure("", e.getMessage(), null));
        }
        try {
            HeartbeatResult r = clients.apply(team).heartbeat(agentId, hb);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("success", true);
            out.put("heartbeatTs", r.heartbeatTs().toString());
            out.put("nextDeadline", r.nextDeadline().toString());
            out.put("agentStatus", r.agentStatus());
            if (r.heartbeatIntervalSeconds() != null) {
                out.put("heartbeatIntervalSeconds", r.heartbeatIntervalSeconds());
            }
            return ok(out);
        } catch (LifelineApiException e) {
            String status = e.agentStatus() == null ? "" : e.agentStatus();
            if (e.status() == 404 && "AGENT_NOT_FOUND".equals(e.code())) {
                return failure(heartbeatFailure(status, "Agent '" + agentId + "' not found", e.code()));
            }
            if (e.rejoinRequired() && "offline".equals(status)) {
                Map<String, Object> out = heartbeatFailure(status, "Cannot heartbeat for terminated agent", e.code());
                return failure(rejoin(out));
            }
            if (e.rejoinRequired()) {
                Map<String, Object> out = heartbeatFailure(status, "Agent is inactive. Requires re-spawn.", e.code());
                return failure(rejoin(out));
            }
            if (e.status() >= 500 || e.isTransient()) {
                return failure(heartbeatFailure(status, "Failed to update heartbeat: " + e.getMessage(), e.code()));
            }
            return failure(heartbeatFailure(status, e.getMessage(), e.code()));
        } catch (LifelineConnectionException e) {
            return failure(heartbeatFailure("", "Failed to update heartbeat: " + e.getMessage(), "UNREACHABLE"));
        } catch (LifelineException e) {
            return failure(heartbeatFailure("", "Failed to update heartbeat: " + e.getMessage(), "LIFELINE_ERROR"));
        }
    }

    private static Map<String, Object> heartbeatFailure(String agentStatus, String error, String code) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("success", false);
        out.put("heartbeatTs", "");
        out.put("nextDeadline", "");
        out.put("agentStatus", agentStatus);
        out.put("error", error);
        if (code != null) {
            out.put("code", code);
        }
        return out;
    }

    private static Map<String, Object> rejoin(Map<String, Object> out) {
        out.put("rejoinRequired", true);
        out.put("hint", REJOIN_HINT);
        return out;
    }

    private static Map<String, Object> refusal(LifelineApiException e) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("success", false);
        out.put("error", e.getMessage());
        out.put("code", e.code());
        if (e.agentStatus() != null) {
            out.put("agentStatus", e.agentStatus());
        }
        if (e.rejoinRequired()) {
            rejoin(out);
        }
        return out;
    }

    private static Stats stats(Map<String, Object> s) {
        if (s == null) {
            return null;
        }
        return JSON.convertValue(s, Stats.class);
    }

    private static CallToolResult ok(Object answer) {
        Map<String, Object> structured = toMap(answer);
        return CallToolResult.builder().structuredContent(structured).addTextContent(text(structured))
                .isError(false).build();
    }

    private static CallToolResult failure(Map<String, Object> answer) {
        return CallToolResult.builder().structuredContent(answer).addTextContent(text(answer)).isError(true).build();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> toMap(Object answer) {
        return answer instanceof Map<?, ?> m ? (Map<String, Object>) m : JSON.convertValue(answer, Map.class);
    }

    private static String text(Object answer) {
        try {
            return JSON.writeValueAsString(answer);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private Args args(Map<String, Object> arguments) {
        return new Args(arguments == null ? Map.of() : arguments);
    }

    /** A tool's arguments; a wrong type or a missing required one is a {@link BadArgument}. */
    static final class Args {
        private final Map<String, Object> values;

        Args(Map<String, Object> values) {
            this.values = values;
        }

        String required(String name) {
            String v = optional(name);
            if (v == null || v.isBlank()) {
                throw new BadArgument("'" + name + "' is required");
            }
            return v;
        }

        String optional(String name) {
            Object v = values.get(name);
            if (v == null) {
                return null;
            }
            if (!(v instanceof String s)) {
                throw new BadArgument("'" + name + "' must be a string");
            }
            return s;
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> object(String name) {
            Object v = values.get(name);
            if (v == null) {
                return null;
            }
            if (!(v instanceof Map<?, ?>)) {
                throw new BadArgument("'" + name + "' must be an object");
            }
            return (Map<String, Object>) v;
        }

        Long longValue(String name) {
            Object v = values.get(name);
            if (v == null) {
                return null;
            }
            if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue())) {
                return n.longValue();
            }
            throw new BadArgument("'" + name + "' must be a whole number");
        }
    }

    /** {@code limit}: 1 to {@link LifelineClient#LARGEST_PAGE}, or null for the server's default page. */
    private static Integer limit(Args a) {
        Long limit = a.longValue("limit");
        if (limit != null && (limit < 1 || limit > LifelineClient.LARGEST_PAGE)) {
            throw new BadArgument("'limit' must be from 1 to " + LifelineClient.LARGEST_PAGE);
        }
        return limit == null ? null : limit.intValue();
    }

    static final class BadArgument extends RuntimeException {
        BadArgument(String message) {
            super(message);
        }
    }

    private String team(Args a) {
        String t = a.optional("teamName");
        return t == null || t.isBlank() ? defaultTeam : t;
    }

    private List<ToolDef> definitionsFor() {
        return List.of(
                new ToolDef("heartbeat", "Heartbeat", HEARTBEAT_DESCRIPTION, HEARTBEAT_INPUT, HEARTBEAT_OUTPUT,
                        false, true, a -> { throw new IllegalStateException("heartbeat has its own handler"); }),
                new ToolDef("join", "Join", "Join the team: your agent becomes ready and Lifeline starts "
                        + "expecting heartbeats. Call it when you start, and whenever heartbeat answers "
                        + "rejoinRequired: true (you were marked dead or offline; joining heals that). The answer "
                        + "says heartbeatIntervalSeconds: heartbeat at least that often.",
                        AGENT_INPUT, AGENT_OUTPUT, false, true,
                        a -> clients.apply(team(a)).join(a.required("agentId"))),
                new ToolDef("leave", "Leave", "Leave the team on purpose (you are finishing or shutting down): "
                        + "you go offline, Lifeline stops expecting heartbeats and hands your unfinished tasks "
                        + "back.", LEAVE_INPUT, AGENT_OUTPUT, false, true,
                        a -> clients.apply(team(a)).leave(a.required("agentId"), a.optional("reason"))),
                new ToolDef("claim_task", "Claim a task", "Claim a pending task before working on it: the task "
                        + "becomes yours (in_progress) and you become working, in one step. Fails if someone "
                        + "else claimed it first.", TASK_INPUT, TASK_OUTPUT, false, false,
                        a -> clients.apply(team(a)).claimTask(a.required("taskId"), a.required("agentId"))),
                new ToolDef("complete_task", "Complete a task", "Mark the task you claimed as done (with an "
                        + "optional short result): the task is done and you are ready again.",
                        COMPLETE_INPUT, TASK_OUTPUT, false, false,
                        a -> clients.apply(team(a)).completeTask(a.required("taskId"), a.required("agentId"),
                                a.optional("result"))),
                new ToolDef("report_error", "Report an error", "Report an error your session hit (paste its "
                        + "message). The answer classifies it: context_limit means start a fresh session and "
                        + "continue from your checkpoint (action rotate_session); transient means wait and retry "
                        + "after retryDelaysSeconds (2, 4, 8); unknown is recorded for a person.",
                        ERROR_INPUT, ERROR_OUTPUT, false, false,
                        a -> clients.apply(team(a)).reportError(a.required("agentId"), a.required("message"))),
                new ToolDef("check_recovery", "Check recovery", "After a restart or crash, ask for your last "
                        + "checkpoint (the one you sent with a heartbeat): available true gives the checkpoint "
                        + "to resume from; false says why there is none.", RECOVERY_INPUT, RECOVERY_OUTPUT, true,
                        true, a -> clients.apply(team(a)).recovery(a.required("agentId"),
                                a.longValue("maxAgeSeconds"))),
                new ToolDef("agent_status", "Agent status", "Read one agent as Lifeline sees it: status "
                        + "(offline, ready, working, dead, restarting, dead_failed_revive), last heartbeat, "
                        + "deadline, missed sweeps, what it waits for (its next prompt, or a person) since when, its last progress, "
                        + "and whether it is stalled (in a turn with no progress past its threshold) since when and why, "
                        + "or parked at its provider's usage limit until when; its running subagents (id, type, since).",
                        AGENT_INPUT, AGENT_OUTPUT, true, true,
                        a -> clients.apply(team(a)).agent(a.required("agentId"))),
                new ToolDef("list_agents", "List agents", "List the team's agents with their status, last "
                        + "heartbeat and deadline, a page at a time (limit, default 100; nextCursor reads the next "
                        + "page); optionally only those with one status.", LIST_INPUT,
                        LIST_OUTPUT, true, true,
                        a -> clients.apply(team(a)).agentsPage(a.optional("status"), limit(a), a.optional("cursor"))));
    }

    /** The definitions without handlers bound to a server (names and schemas only). */
    private static List<ToolDef> definitions() {
        return new LifelineTools(t -> {
            throw new IllegalStateException("no client");
        }, "-").definitionsFor();
    }

    /** Every tool with its handler bound to this server's clients. */
    public List<SyncToolSpecification> tools(McpJsonMapper mapper) {
        List<SyncToolSpecification> all = new ArrayList<>();
        for (ToolDef def : definitionsFor()) {
            McpSchema.Tool.Builder tool = McpSchema.Tool.builder().name(def.name()).title(def.title())
                    .description(def.description()).inputSchema(mapper, def.inputSchema());
            if (def.outputSchema() != null) {
                tool.outputSchema(mapper, def.outputSchema());
            }
            tool.annotations(new McpSchema.ToolAnnotations(def.title(), def.readOnly(), false, def.idempotent(),
                    false, null));
            all.add(SyncToolSpecification.builder().tool(tool.build())
                    .callHandler((exchange, request) -> call(def, args(request.arguments()))).build());
        }
        return all;
    }

    static final String HEARTBEAT_DESCRIPTION = "Tell Lifeline you are alive. Call it about every 30 seconds "
            + "(the answer's heartbeatIntervalSeconds says exactly how often) whenever you are busy with something "
            + "long that makes no other calls, and when your state changes: status active/working while you work, "
            + "idle/ready when you wait. If you stop calling it, Lifeline marks you dead after about a minute and "
            + "hands your tasks to others. The answer gives nextDeadline: the time by which the next heartbeat "
            + "must arrive. If it answers success: false with rejoinRequired: true, you were marked dead or "
            + "offline: call join with the same agentId and teamName, then carry on.";

    private static final String TEAM_PROPERTY = """
            "teamName": {"type": "string", "minLength": 1, "description": "Team the agent belongs to (default: the server's configured team)"}""";

    static final String HEARTBEAT_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "ID of the agent sending the heartbeat"},
               "teamName": {"type": "string", "minLength": 1, "description": "Team the agent belongs to"},
               "status": {"type": "string", "enum": ["active", "idle", "working", "ready"],
                          "description": "Optional status override: active (= working) or idle (= ready). Defaults to the current status."},
               "metadata": {"type": "object", "additionalProperties": true, "description": "Optional metadata (current task, progress, etc.)"},
               "stats": {"type": "object", "additionalProperties": false, "description": "Optional counters since you started",
                         "properties": {"messagesProcessed": {"type": "integer", "minimum": 0},
                                        "toolCallsExecuted": {"type": "integer", "minimum": 0},
                                        "errorsEncountered": {"type": "integer", "minimum": 0}}},
               "checkpoint": {"type": "object", "additionalProperties": true, "description": "Optional state to resume from after a crash (check_recovery returns it)"},
               "nextHeartbeatWithinSeconds": {"type": "integer", "minimum": 1, "description": "Optional: you promise the next heartbeat within this many seconds (a long step ahead)"}
             },
             "required": ["agentId", "teamName"],
             "additionalProperties": false}""";

    static final String HEARTBEAT_OUTPUT = """
            {"type": "object",
             "properties": {
               "success": {"type": "boolean"},
               "heartbeatTs": {"type": "string", "description": "ISO-8601 time of this heartbeat; empty when success is false"},
               "nextDeadline": {"type": "string", "description": "ISO-8601 time by which the next heartbeat must arrive; empty when success is false"},
               "agentStatus": {"type": "string", "description": "The agent's status after the call"},
               "heartbeatIntervalSeconds": {"type": "integer", "description": "Heartbeat at least this often"},
               "error": {"type": "string"},
               "code": {"type": "string"},
               "rejoinRequired": {"type": "boolean", "description": "true: call join, then heartbeat again"},
               "hint": {"type": "string"}
             },
             "required": ["success", "heartbeatTs", "nextDeadline", "agentStatus"]}""";

    static final String AGENT_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               %s
             },
             "required": ["agentId"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String LEAVE_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               %s,
               "reason": {"type": "string", "description": "Why you are leaving (recorded)"}
             },
             "required": ["agentId"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String TASK_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               "taskId": {"type": "string", "minLength": 1, "description": "The task's ID"},
               %s
             },
             "required": ["agentId", "taskId"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String COMPLETE_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               "taskId": {"type": "string", "minLength": 1, "description": "The task's ID"},
               "result": {"type": "string", "description": "A short result, recorded on the task"},
               %s
             },
             "required": ["agentId", "taskId"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String ERROR_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               "message": {"type": "string", "minLength": 1, "description": "The error message your session got"},
               %s
             },
             "required": ["agentId", "message"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String RECOVERY_INPUT = """
            {"type": "object",
             "properties": {
               "agentId": {"type": "string", "minLength": 1, "description": "The agent's ID"},
               "maxAgeSeconds": {"type": "integer", "minimum": 1, "description": "Ignore a checkpoint older than this (default 24 h)"},
               %s
             },
             "required": ["agentId"], "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String LIST_INPUT = """
            {"type": "object",
             "properties": {
               "status": {"type": "string", "enum": ["offline", "ready", "working", "dead", "restarting", "dead_failed_revive", "idle", "active", "inactive", "terminated"],
                          "description": "Only agents with this status"},
               "limit": {"type": "integer", "minimum": 1, "maximum": 1000,
                         "description": "Agents in this page (default 100)"},
               "cursor": {"type": "string", "description": "The nextCursor of the page before (same status)"},
               %s
             },
             "additionalProperties": false}""".formatted(TEAM_PROPERTY);

    static final String AGENT_OUTPUT = """
            {"type": "object",
             "properties": {"agentId": {"type": "string"}, "teamName": {"type": "string"}, "status": {"type": "string"},
                            "heartbeatTs": {"type": "string"}, "deadline": {"type": "string"},
                            "heartbeatIntervalSeconds": {"type": "integer"}, "success": {"type": "boolean"},
                            "error": {"type": "string"}, "rejoinRequired": {"type": "boolean"},
                            "waiting": {"type": "object", "properties": {"for": {"type": "string", "enum": ["input", "person"]},
                                                                      "since": {"type": "string"}}},
                            "lastProgressAt": {"type": "string"},
                            "stalled": {"type": "object", "properties": {"since": {"type": "string"},
                                                                      "reason": {"type": "string"}}},
                            "parked": {"type": "object", "properties": {"until": {"type": "string"},
                                                                     "reason": {"type": "string"},
                                                                     "since": {"type": "string"}}},
                            "subagents": {"type": "array", "items": {"type": "object",
                                          "properties": {"id": {"type": "string"}, "type": {"type": "string"},
                                                         "since": {"type": "string"}}}},
                            "subagentsMore": {"type": "integer"}}}""";

    static final String TASK_OUTPUT = """
            {"type": "object",
             "properties": {"success": {"type": "boolean"}, "agentStatus": {"type": "string"},
                            "task": {"type": "object"}, "error": {"type": "string"}}}""";

    static final String ERROR_OUTPUT = """
            {"type": "object",
             "properties": {"category": {"type": "string", "enum": ["context_limit", "transient", "unknown"]},
                            "action": {"type": "string"},
                            "retryDelaysSeconds": {"type": "array", "items": {"type": "integer"}},
                            "success": {"type": "boolean"}, "error": {"type": "string"}}}""";

    static final String RECOVERY_OUTPUT = """
            {"type": "object",
             "properties": {"available": {"type": "boolean"}, "reason": {"type": "string"},
                            "checkpoint": {"type": "object"}, "savedAt": {"type": "string"},
                            "agentStatus": {"type": "string"}, "success": {"type": "boolean"},
                            "error": {"type": "string"}}}""";

    static final String LIST_OUTPUT = """
            {"type": "object",
             "properties": {"count": {"type": "integer"}, "agents": {"type": "array", "items": {"type": "object"}},
                            "nextCursor": {"type": "string"},
                            "success": {"type": "boolean"}, "error": {"type": "string"}}}""";
}
