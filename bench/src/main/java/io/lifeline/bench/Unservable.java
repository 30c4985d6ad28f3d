package io.lifeline.bench;

import java.util.List;

/** The model's refusal to price a fleet its caps cannot serve: {@link #shortfalls()}, the tightest first. */
public final class Unservable extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private final transient List<Shortfall> shortfalls;

    Unservable(Workload w, List<Shortfall> shortfalls) {
        super(w.name() + ": the caps cannot serve this fleet; " + shortfalls.stream().map(Shortfall::toString)
                .reduce((x, y) -> x + "; " + y).orElse(""));
        this.shortfalls = List.copyOf(shortfalls);
    }

    public List<Shortfall> shortfalls() {
        return shortfalls;
    }
}
