package dev.orderless.amqp;

import dev.orderless.testing.rabbit.OnRabbitMq4;

/** {@link BrokerVersionsTest} on RabbitMQ 4 (what changed in 4.0: its default delivery limit, the broker's own dead letters, re-declaring); CONTRIBUTING.md says why these. */
@OnRabbitMq4
class BrokerVersionsOnRabbitMq4Test extends BrokerVersionsTest {
}
