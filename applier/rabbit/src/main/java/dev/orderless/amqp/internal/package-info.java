/**
 * Not API: what orderless's own RabbitMQ pieces share (the consumer's dead letters, the publisher, the
 * outbox relay). It may change in any release; do not use it from an application.
 */
package dev.orderless.amqp.internal;
