package dev.orderless.conformance;

/** {@link MongoConformanceContract} on the backend this run chose: embedded, {@code MONGODB_URI}, or a container. */
class MongoConformanceTest extends MongoConformanceContract {
}
