package io.lifeline.bench;

/** Figure 4 (cold start): not implemented yet; the run says so instead of printing nothing. */
final class ColdStartBench {
    private ColdStartBench() {
    }

    static void run(Report r, int n) {
        r.note("figure 4 (cold start) is not implemented yet");
    }
}
