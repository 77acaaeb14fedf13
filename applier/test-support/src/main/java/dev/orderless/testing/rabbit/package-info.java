/**
 * For tests: the JUnit extension that gives a test the run's broker and a connection factory with
 * confirms ({@link dev.orderless.testing.rabbit.RabbitExtension}), confirmed publishing of raw bodies, and
 * the check that a test may stop or alarm a local RabbitMQ only if it is the broker under test.
 */
package dev.orderless.testing.rabbit;
