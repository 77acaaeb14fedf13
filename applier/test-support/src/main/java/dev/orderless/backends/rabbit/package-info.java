/**
 * For tests: the AMQP broker a test talks to, chosen as the MongoDB is
 * ({@link dev.orderless.backends.rabbit.RabbitBackends}): {@code RABBITMQ_URI}, a RabbitMQ in a container, or
 * Apache Qpid Broker-J in the JVM.
 */
package dev.orderless.backends.rabbit;
