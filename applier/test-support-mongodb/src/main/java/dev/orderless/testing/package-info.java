/**
 * For tests: the JUnit extension that gives a test its MongoDB and a fresh database
 * ({@link dev.orderless.testing.MongoExtension}), a TCP proxy that cuts, slows and throttles a connection
 * ({@link dev.orderless.testing.TcpProxy}), a seeded property runner and a manual clock.
 */
package dev.orderless.testing;
