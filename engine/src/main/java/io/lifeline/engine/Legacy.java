package io.lifeline.engine;

/** The pre-expression parameters (Expected, AttributesToGet, ...): refused by name, never half-honoured. */
final class Legacy {
    private Legacy() {
    }

    static void refuse(boolean present, String names, boolean conditionalOperator) {
        if (present) {
            throw Errors.unsupported("the legacy parameter " + names + "; use expressions");
        }
        if (conditionalOperator) {
            throw Errors.unsupported("the legacy parameter ConditionalOperator; use expressions");
        }
    }
}
