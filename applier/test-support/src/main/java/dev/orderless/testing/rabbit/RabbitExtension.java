package dev.orderless.testing.rabbit;

import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.backends.Backends;
import dev.orderless.backends.rabbit.RabbitBackend;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Gives tests the AMQP broker that {@link Backends} chooses (RABBITMQ_URI, containers, or the embedded
 * Qpid), one per run, closed at its end, and a Spring {@link ConnectionFactory} on it with publisher
 * confirms and returns enabled. Tests name their queues with {@link #uniqueQueue(String)} so nothing
 * left in a shared broker by an earlier run is ever seen.
 */
public final class RabbitExtension implements ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RabbitExtension.class);

    record Shared(RabbitBackend backend, CachingConnectionFactory connectionFactory) implements AutoCloseable {
        @Override
        public void close() {
            try {
                connectionFactory.destroy();
            } finally {
                backend.close();
            }
        }
    }

    public static String uniqueQueue(String prefix) {
        return "orderless.test." + prefix + "." + UUID.randomUUID().toString().substring(0, 8);
    }

    static Shared shared(ExtensionContext context) {
        return context.getRoot().getStore(NS).computeIfAbsent(Shared.class, k -> {
            RabbitBackend backend = RabbitBackends.rabbit();
            System.out.println("[orderless tests] AMQP broker: " + backend.description());
            CachingConnectionFactory factory = new CachingConnectionFactory(backend.uri());
            factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            factory.setPublisherReturns(true);
            factory.setChannelCacheSize(32);
            return new Shared(backend, factory);
        }, Shared.class);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == RabbitBackend.class || type == ConnectionFactory.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Shared shared = shared(context);
        return parameter.getParameter().getType() == RabbitBackend.class ? shared.backend() : shared.connectionFactory();
    }
}
