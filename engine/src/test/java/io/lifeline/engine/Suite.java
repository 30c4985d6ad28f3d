package io.lifeline.engine;

/** Every conformance case, for one class per target to implement. */
interface Suite extends ItemCases, UpdateCases, ConditionCases, ReadCases, TransactionCases, LimitCases, MoreCases,
        CapacityCases, StreamCases {
}
