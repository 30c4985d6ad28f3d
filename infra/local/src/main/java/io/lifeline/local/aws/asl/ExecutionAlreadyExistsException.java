package io.lifeline.local.aws.asl;

/** {@link AslRunner#start} with a name already used, like Step Functions' ExecutionAlreadyExists. */
public final class ExecutionAlreadyExistsException extends IllegalArgumentException {
    public ExecutionAlreadyExistsException(String name) {
        super("Execution already exists: '" + name + "'");
    }
}
