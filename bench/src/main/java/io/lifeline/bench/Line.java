package io.lifeline.bench;

/** One line of the bill: its group, what it is, dollars a month, how it was counted, and if it is watching. */
public record Line(String group, String item, double usd, String basis, boolean observability) {
}
