package io.lifeline.bench;
final class ThroughputBench { static void run(Report r, int[] a, int b, Measured m) {} static void run(Report r, int a, int b, Measured m) {} }
