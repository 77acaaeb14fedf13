package dev.orderless.conformance;

/** {@link ElectionConformanceContract} on the backend this run chose: embedded, {@code MONGODB_URI}, or a container. */
class ElectionConformanceTest extends ElectionConformanceContract {
}
