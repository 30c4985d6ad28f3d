package io.lifeline.api;

import java.util.Map;

/** HTTP header lookup, the one way every handler reads a request's headers: by name, in any case. */
public final class Headers {
    private Headers() {
    }

    /** The value of header {@code name} in {@code headers} (matched ignoring case); null when absent or no headers. */
    public static String get(Map<String, String> headers, String name) {
        if (headers == null) {
            return null;
        }
        String exact = headers.get(name);
        if (exact != null) {
            return exact;
        }
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (name.equalsIgnoreCase(h.getKey())) {
                return h.getValue();
            }
        }
        return null;
    }
}
