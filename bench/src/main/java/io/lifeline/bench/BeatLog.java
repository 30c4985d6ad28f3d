package io.lifeline.bench;

/** Log bytes a beat: the heartbeat function's lines, and the authorizer's (API path). */
public record BeatLog(double handlerBytesPerBeat, double authorizerBytesPerBeat) {
}
