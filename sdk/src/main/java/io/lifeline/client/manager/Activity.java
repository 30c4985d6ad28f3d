package io.lifeline.client.manager;

/** Something the agent did, counted in its stats. */
public enum Activity {
    MESSAGE, TOOL_CALL, ERROR
}
