package io.lifeline.bench;

/** Figures one section measures and a later one (the cost model) uses; NaN until measured. */
public final class Measured {
    /** Write units and requests of a plain heartbeat, and per agent in a batch. */
    public double heartbeatWriteUnits = Double.NaN;
    public double heartbeatRequests = Double.NaN;
    public double batchedWriteUnitsPerAgent = Double.NaN;
    /** A plain batch through a host lease of 10 / 25 agents: write and read units per agent. */
    public double hosted10WriteUnitsPerAgent = Double.NaN;
    public double hosted25WriteUnitsPerAgent = Double.NaN;
    public double hostedReadUnitsPerAgent = Double.NaN;
    public double batchSize = Double.NaN;
    /** Sweep read units per agent per sweep, at the largest N measured. */
    public double sweepReadUnitsPerAgent = Double.NaN;
    /** The same at the smallest N before any history was on the ledger. */
    public double sweepReadUnitsPerAgentNoHistory = Double.NaN;
    /** The N {@link #sweepReadUnitsPerAgent} was measured at. */
    public int sweepAgents;
    /** The busy sample agent's live item (bytes, DynamoDB's rules) and its 30 days of ledger items. */
    public double liveAgentItemBytes = Double.NaN;
    public double historyItemsPerAgent = Double.NaN;
    /** The heartbeat handler's warm duration in-process (p50), ms: the Lambda billed-duration stand-in. */
    public double handlerWarmMillis = Double.NaN;
}
