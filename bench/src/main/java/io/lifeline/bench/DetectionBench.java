package io.lifeline.bench;
final class DetectionBench { static void run(Report r, int n) {} }
