package io.lifeline.bench;

import java.util.Locale;

/** The month the model bills (30 days), a gigabyte, and how its figures are written. */
final class CostUnits {
    public static final double SECONDS_PER_MONTH = 30 * 86_400.0;
    public static final double MINUTES_PER_MONTH = SECONDS_PER_MONTH / 60;
    public static final double HOURS_PER_MONTH = SECONDS_PER_MONTH / 3600;
    static final double GB = 1e9;

    private CostUnits() {
    }

    static String fmt(double v) {
        if (v >= 100 || v == Math.rint(v)) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return String.format(Locale.ROOT, "%,.2f", v);
    }

    static String fmt4(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }

    static String money(double v) {
        if (v == 0) {
            return "0";
        }
        if (v >= 1_000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v >= 10) {
            return String.format(Locale.ROOT, "%.2f", v);
        }
        return v < 0.0001 ? String.format(Locale.ROOT, "%.6f", v) : String.format(Locale.ROOT, "%.4f", v);
    }
}
