package dev.orderless.amqp;

import dev.orderless.testing.rabbit.OnRabbitMq4;

/** {@link DeadLetterQueueTest} on RabbitMQ 4 (listing, replaying and parking the letters); CONTRIBUTING.md says why these. */
@OnRabbitMq4
class DeadLetterQueueOnRabbitMq4Test extends DeadLetterQueueTest {
}
