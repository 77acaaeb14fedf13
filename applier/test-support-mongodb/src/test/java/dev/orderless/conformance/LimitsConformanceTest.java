package dev.orderless.conformance;

/** {@link LimitsConformanceContract} on the backend this run chose: embedded, {@code MONGODB_URI}, or a container. */
class LimitsConformanceTest extends LimitsConformanceContract {
}
