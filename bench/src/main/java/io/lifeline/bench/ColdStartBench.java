package io.lifeline.bench;
final class ColdStartBench { static void run(Report r, int n) {} }
