package dev.orderless.amqp10;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import java.net.URI;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests an AMQP 1.0 {@link Connection} to the RabbitMQ 4 of {@code RABBITMQ4_URI} (for classes marked
 * {@code @OnRabbitMq4}, which are skipped without it), one per test, closed after it.
 */
final class Amqp10Extension implements ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(Amqp10Extension.class);

    record Open(Environment environment, Connection connection) implements AutoCloseable {
        @Override
        public void close() {
            try {
                connection.close();
            } finally {
                environment.close();
            }
        }
    }

    /** An environment of its own on {@code uri}: a test that cuts connections closes it with them. */
    static Open open(URI uri) {
        Environment environment = new AmqpEnvironmentBuilder().connectionSettings().uri(uri.toString())
                .environmentBuilder().build();
        return new Open(environment, environment.connectionBuilder().build());
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Connection.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        URI uri = RabbitBackends.rabbitMq4Backend().map(RabbitBackend::uri).orElseThrow();
        return context.getStore(NS).computeIfAbsent(Open.class, k -> open(uri), Open.class).connection();
    }
}
