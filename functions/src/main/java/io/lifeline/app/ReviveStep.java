package io.lifeline.app;

import java.util.Map;

/** One call from the state machine, as its Parameters shape it. */
public record ReviveStep(String action, String team, String agentId, long startSeq, long seq, int attempt,
                  String executionId, String errorName, String errorCause) {

    public static ReviveStep of(Map<String, Object> in) {
        Object error = in.get("error");
        String errorName = null;
        String errorCause = null;
        if (error instanceof Map<?, ?> e) {
            errorName = e.get("Error") == null ? null : e.get("Error").toString();
            errorCause = e.get("Cause") == null ? null : e.get("Cause").toString();
        }
        return new ReviveStep(text(in, "action"), text(in, "team"), text(in, "agentId"), number(in, "startSeq"),
                number(in, "seq"), (int) number(in, "attempt"), (String) in.get("executionId"), errorName, errorCause);
    }

    private static String text(Map<String, Object> in, String field) {
        Object v = in.get(field);
        if (v == null) {
            throw new IllegalArgumentException("The revive step needs '" + field + "'");
        }
        return v.toString();
    }

    private static long number(Map<String, Object> in, String field) {
        Object v = in.get(field);
        if (v == null) {
            return 0;
        }
        return v instanceof Number n ? n.longValue() : Long.parseLong(v.toString());
    }
}
