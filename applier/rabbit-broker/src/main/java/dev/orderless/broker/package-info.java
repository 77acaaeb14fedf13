/**
 * What both sides of the broker share: {@link dev.orderless.broker.QueueTopology} declares the work queue and its
 * dead-letter queue the same way whichever side starts first (a producer that declares them needs no consumer
 * code), and {@link dev.orderless.broker.BrokerBlocking} watches for the broker blocking publishing connections (a
 * resource alarm), so a publisher or a consumer's dead-letter publisher holds what it would send instead of
 * blocking a thread on it, and says so in a metric.
 */
package dev.orderless.broker;
