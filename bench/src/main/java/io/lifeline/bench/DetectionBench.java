package io.lifeline.bench;

/** Figure 5 (detection latency): not implemented yet; the run says so instead of printing nothing. */
final class DetectionBench {
    private DetectionBench() {
    }

    static void run(Report r, int n) {
        r.note("figure 5 (detection latency) is not implemented yet");
    }
}
