package dev.orderless.outbox;

import dev.orderless.testing.rabbit.OnRabbitMq4;

/** {@link OutboxRelayTest} on RabbitMQ 4: the confirming publisher and its relay against a 4.0 broker. */
@OnRabbitMq4
class OutboxRelayOnRabbitMq4Test extends OutboxRelayTest {
}
