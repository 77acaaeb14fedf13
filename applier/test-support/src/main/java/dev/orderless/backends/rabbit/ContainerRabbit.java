package dev.orderless.backends.rabbit;

import java.net.URI;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/** RabbitMQ in a container (needs a Docker engine; {@code -Ptestcontainers}). */
final class ContainerRabbit implements RabbitBackend {
    static final String IMAGE = "rabbitmq:3.13-management";

    private final RabbitMQContainer container;

    private ContainerRabbit(RabbitMQContainer container) {
        this.container = container;
    }

    static ContainerRabbit start() {
        RabbitMQContainer container = new RabbitMQContainer(IMAGE);
        container.start();
        return new ContainerRabbit(container);
    }

    @Override
    public Kind kind() {
        return Kind.CONTAINER;
    }

    @Override
    public URI uri() {
        return URI.create("amqp://" + container.getAdminUsername() + ":" + container.getAdminPassword() + "@"
                + container.getHost() + ":" + container.getAmqpPort() + "/%2F");
    }

    @Override
    public boolean isRabbitMq() {
        return true;
    }

    @Override
    public String description() {
        return IMAGE + " in a container at " + container.getHost() + ":" + container.getAmqpPort();
    }

    @Override
    public void close() {
        container.stop();
    }
}
