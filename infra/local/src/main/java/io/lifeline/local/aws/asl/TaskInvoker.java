package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;

/** Runs Task resources; Local wires each Resource string to a handler. */
@FunctionalInterface
public interface TaskInvoker {
    /** Runs a Task's resource on its effective input; throws TaskFailure(errorName, cause) for a failed task. */
    JsonNode invoke(String resource, JsonNode input) throws TaskFailure;
}
