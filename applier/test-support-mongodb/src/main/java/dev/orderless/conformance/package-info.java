/**
 * The MongoDB behaviours orderless relies on, as contracts to run against any backend: extend
 * {@link dev.orderless.conformance.MongoConformanceContract} and
 * {@link dev.orderless.conformance.LimitsConformanceContract} in a test. Where a backend declares a known
 * difference, the contract pins the deviating behaviour instead, so a backend that stops differing fails.
 */
package dev.orderless.conformance;
