package io.lifeline.bench;

import java.util.Locale;

/** A cap too small for a workload: its name and figure, the requests a second it serves and those needed. */
public record Shortfall(String cap, int figure, double servesRps, double needsRps) {
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s %,d serves %,.0f requests/s, the fleet needs %,.0f", cap, figure,
                servesRps, needsRps);
    }
}
