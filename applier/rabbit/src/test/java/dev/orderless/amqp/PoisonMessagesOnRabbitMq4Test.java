package dev.orderless.amqp;

import dev.orderless.testing.rabbit.OnRabbitMq4;

/** {@link PoisonMessagesTest} on RabbitMQ 4 (poison through the consumer, dead-lettered with its reason); CONTRIBUTING.md says why these. */
@OnRabbitMq4
class PoisonMessagesOnRabbitMq4Test extends PoisonMessagesTest {
}
