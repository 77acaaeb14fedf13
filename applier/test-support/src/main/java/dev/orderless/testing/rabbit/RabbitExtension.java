package dev.orderless.testing.rabbit;

import dev.orderless.backends.Backends;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Gives tests the AMQP broker that {@link Backends} chooses (RABBITMQ_URI, containers, or the embedded
 * Qpid), one per run, closed at its end, and a Spring {@link ConnectionFactory} on it with publisher
 * confirms and returns enabled; a class marked {@link OnRabbitMq4} gets the RabbitMQ 4 of
 * {@code RABBITMQ4_URI} instead, or is skipped without one. Tests name their queues with
 * {@link #uniqueQueue(String)} so nothing left in a shared broker by an earlier run is ever seen.
 */
public final class RabbitExtension implements ParameterResolver, ExecutionCondition {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(RabbitExtension.class);
    private static final String NO_RABBITMQ4 = "no RabbitMQ 4: set " + RabbitBackends.RABBITMQ4_URI
            + " (CI starts one with ../shared/tools/rabbitmq4.sh; CONTRIBUTING.md)";

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
        boolean four = onRabbitMq4(context);
        return context.getRoot().getStore(NS).computeIfAbsent(four ? "rabbitmq4" : "default", k -> {
            RabbitBackend backend = four ? RabbitBackends.rabbitMq4Backend().orElseThrow(() ->
                    new IllegalStateException(NO_RABBITMQ4)) : RabbitBackends.rabbit();
            System.out.println("[orderless tests] AMQP broker" + (four ? " (RabbitMQ 4)" : "") + ": "
                    + backend.description());
            CachingConnectionFactory factory = new CachingConnectionFactory(backend.uri());
            factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            factory.setPublisherReturns(true);
            factory.setChannelCacheSize(32);
            return new Shared(backend, factory);
        }, Shared.class);
    }

    private static boolean onRabbitMq4(ExtensionContext context) {
        return context.getTestClass().map(c -> c.isAnnotationPresent(OnRabbitMq4.class)).orElse(false);
    }

    /** Skips a class marked {@link OnRabbitMq4} when no RabbitMQ 4 is named; said once per run. */
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (!onRabbitMq4(context) || RabbitBackends.rabbitMq4().isPresent()) {
            return ConditionEvaluationResult.enabled("");
        }
        AtomicBoolean said = context.getRoot().getStore(NS).computeIfAbsent("said-no-rabbitmq4", k -> new AtomicBoolean(),
                AtomicBoolean.class);
        if (said.compareAndSet(false, true)) {
            System.out.println("[orderless tests] the tests on RabbitMQ 4 are skipped: " + NO_RABBITMQ4);
        }
        return ConditionEvaluationResult.disabled(NO_RABBITMQ4);
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
