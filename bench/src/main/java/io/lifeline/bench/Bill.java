package io.lifeline.bench;

import java.util.List;

/** A workload's month under one deployment, line by line, with its sums: by group, what watching costs, per agent. */
public record Bill(Workload workload, Deployment deployment, List<Line> lines) {
    public double total() {
        return lines.stream().mapToDouble(Line::usd).sum();
    }

    public double group(String group) {
        return lines.stream().filter(l -> l.group().equals(group)).mapToDouble(Line::usd).sum();
    }

    /** What the deployment pays to watch itself: alarms, custom metrics, traces, log lines and the logs kept. */
    public double observability() {
        return lines.stream().filter(Line::observability).mapToDouble(Line::usd).sum();
    }

    /** The observability lines that come with the beats (their logs, traces and the fleet's metrics). */
    public double beatObservability() {
        return lines.stream().filter(l -> l.observability() && l.group().equals(BEATS)).mapToDouble(Line::usd)
                .sum();
    }

    /** Keeping agents alive: the clock, the sweep and the beats (no work, no storage, no dashboard). */
    public double liveness() {
        return group(FIXED) + group(SWEEP) + group(BEATS);
    }

    public double livenessPerAgent() {
        return workload.agents() == 0 ? Double.NaN : liveness() / workload.agents();
    }

    public double totalPerAgent() {
        return workload.agents() == 0 ? Double.NaN : total() / workload.agents();
    }

    public double usd(String itemPrefix) {
        return lines.stream().filter(l -> l.item().startsWith(itemPrefix)).mapToDouble(Line::usd).sum();
    }

    static final String FIXED = "fixed";
    static final String SWEEP = "sweep";
    static final String BEATS = "beats";
    static final String WORK = "work";
    static final String STORAGE = "storage";
    static final String DASHBOARD = "dashboard";
}
