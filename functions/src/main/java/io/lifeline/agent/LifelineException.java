package io.lifeline.agent;

/**
 * A request that cannot be served, with a machine code and a sentence for a person. The API layer maps
 * {@link Kind} to an HTTP status; the domain never speaks HTTP.
 */
public class LifelineException extends RuntimeException {

    public enum Kind { BAD_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, TOO_LARGE, THROTTLED, UNAVAILABLE }

    private final Kind kind;
    private final String code;
    private final AgentStatus currentStatus;

    public LifelineException(Kind kind, String code, String message) {
        this(kind, code, message, null, null);
    }

    public LifelineException(Kind kind, String code, String message, AgentStatus currentStatus, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.code = code;
        this.currentStatus = currentStatus;
    }

    public Kind kind() {
        return kind;
    }

    public String code() {
        return code;
    }

    /** The agent's status when a state-dependent request was refused, or null. */
    public AgentStatus currentStatus() {
        return currentStatus;
    }

    public static LifelineException badInput(String code, String message) {
        return new LifelineException(Kind.BAD_INPUT, code, message);
    }

    public static LifelineException agentNotFound(String agentId) {
        return new LifelineException(Kind.NOT_FOUND, "AGENT_NOT_FOUND", "Agent '" + agentId + "' not found");
    }

    public static LifelineException taskNotFound(String taskId) {
        return new LifelineException(Kind.NOT_FOUND, "TASK_NOT_FOUND", "Task '" + taskId + "' not found");
    }

    /**
     * The agent's current status does not allow {@code trigger}. Said in the API's words: what was asked, the status
     * and what it means, and the statuses it is allowed in ("Cannot revive the agent: it is offline (it left or has
     * not joined); only an agent that is dead or dead_failed_revive can be."). The code and {@code agentStatus} carry
     * the same for a program.
     */
    public static LifelineException notAllowed(Trigger trigger, AgentStatus current) {
        TransitionTable.Rule rule = TransitionTable.rule(trigger);
        return new LifelineException(Kind.CONFLICT, "INVALID_TRANSITION",
                "Cannot " + trigger.asked() + ": the agent is " + current.wire() + " (" + current.meaning()
                        + "); that is allowed only while it is " + wireList(rule.from()),
                current, null);
    }

    private static String wireList(Iterable<AgentStatus> statuses) {
        StringBuilder sb = new StringBuilder();
        for (AgentStatus s : statuses) {
            sb.append(sb.length() == 0 ? "" : ", ").append(s.wire());
        }
        int last = sb.lastIndexOf(", ");
        if (last >= 0) {
            sb.replace(last, last + 2, " or ");
        }
        return sb.toString();
    }
}
