package io.lifeline.bench;
final class SweepBench { static void run(Report r, int[] a, int b, Measured m) {} static void run(Report r, int a, int b, Measured m) {} }
