package io.lifeline.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The caps check: which of a deployment's caps cannot serve a workload's heartbeat rate, and the caps of the
 * smallest {@link FleetSizing} size that can. The model prices a fleet only where this finds nothing short.
 */
final class FleetCaps {
    private FleetCaps() {
    }

    /** Agents alone at 30 s that send the workload's heartbeat requests (FleetSizing's unit). */
    static double equivalentAgents(Workload w) {
        return FleetSizing.equivalentAgents(w.agents(), w.beatSeconds(), 1.0, w.agentsPerRequest());
    }

    /** The caps of the smallest FleetSize that covers the workload: the deployment sized for it. */
    static FleetSizing.Caps sizedFor(Workload w) {
        return FleetSizing.caps(FleetSizing.classFor(equivalentAgents(w)), FleetSizing.Inputs.defaults());
    }

    /**
     * The caps that cannot serve the workload's mean heartbeat rate, tightest first (empty: it can be served). A
     * function serves min(10 x its concurrency, concurrency / duration) requests a second; the stage's route throttle
     * its rate; the authorizer runs once per key and cache period (API path only).
     */
    static List<Shortfall> shortfalls(Workload w, Deployment d, Measures m, Assumptions a, FleetSizing.Caps caps) {
        List<Shortfall> out = new ArrayList<>();
        if (w.agents() == 0) {
            return out;
        }
        double rps = w.agents() / w.beatSeconds() / w.agentsPerRequest();
        double millis = w.hosted() ? m.heartbeatMillis() : m.heartbeatMillis() * w.agentsPerRequest();
        if (w.viaUrl()) {
            function(out, "HeartbeatUrlFunction reserved concurrency", caps.heartbeatUrl(), millis, rps);
        } else {
            if (caps.heartbeatRouteRate() < rps) {
                out.add(new Shortfall("heartbeat route ThrottlingRateLimit", caps.heartbeatRouteRate(),
                        caps.heartbeatRouteRate(), rps));
            }
            function(out, "HeartbeatFunction reserved concurrency", caps.heartbeat(), millis, rps);
            double keys = (double) w.agents() / w.agentsPerRequest() / d.keyCacheSeconds();
            function(out, "AuthorizerFunction reserved concurrency", caps.authorizer(), a.authorizerMillis(), keys);
        }
        out.sort((x, y) -> Double.compare(x.servesRps() / x.needsRps(), y.servesRps() / y.needsRps()));
        return out;
    }

    private static void function(List<Shortfall> out, String cap, int concurrency, double millis, double rps) {
        double serves = Math.min(FleetSizing.RPS_PER_CONCURRENCY * concurrency, concurrency * 1000.0 / millis);
        if (serves < rps) {
            out.add(new Shortfall(cap, concurrency, serves, rps));
        }
    }
}
