package dev.orderless.testing.kafka;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One broker per test class ({@code @ExtendWith(KafkaExtension.class)}), from {@link KafkaBrokers#fromEnvironment()},
 * closed after the class: given to test methods, constructors and lifecycle methods as a {@link KafkaBroker}
 * parameter, or as an {@link EmbeddedKafka} to a test that restarts it (which fails, saying why, when
 * {@value KafkaBrokers#KAFKA_BOOTSTRAP} names a broker of its own). Nested classes share their outer class's broker.
 * Tests name their topics and groups uniquely, as one broker serves every test of the class (and a real one, others).
 */
public final class KafkaExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(KafkaExtension.class);
    private static final String BROKER = "broker";

    /** For JUnit. */
    public KafkaExtension() {
    }

    /** Starts (or finds) the class's broker, unless an enclosing class has one. */
    @Override
    public void beforeAll(ExtensionContext context) {
        broker(context);
    }

    /** Closes the broker this class started (a nested class leaves its outer class's alone). */
    @Override
    public void afterAll(ExtensionContext context) {
        KafkaBroker broker = context.getStore(NS).remove(BROKER, KafkaBroker.class);
        if (broker != null) {
            broker.close();
        }
    }

    /** Whether the parameter is a {@link KafkaBroker} or an {@link EmbeddedKafka}. */
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == KafkaBroker.class || type == EmbeddedKafka.class;
    }

    /** The class's broker. */
    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        KafkaBroker broker = broker(context);
        if (parameter.getParameter().getType() == EmbeddedKafka.class && !(broker instanceof EmbeddedKafka)) {
            throw new ParameterResolutionException("this test needs the embedded Kafka (it restarts it) but "
                    + KafkaBrokers.KAFKA_BOOTSTRAP + " names " + broker.bootstrapServers() + ": unset it to run it");
        }
        return broker;
    }

    private static KafkaBroker broker(ExtensionContext context) {
        KafkaBroker found = context.getStore(NS).get(BROKER, KafkaBroker.class);
        if (found != null) {
            return found;
        }
        ExtensionContext owner = classContext(context);
        return owner.getStore(NS).computeIfAbsent(BROKER, k -> {
            KafkaBroker broker = KafkaBrokers.fromEnvironment();
            System.out.println("[orderless tests] Kafka broker: " + broker.bootstrapServers()
                    + (broker instanceof EmbeddedKafka ? " (embedded)" : " (" + KafkaBrokers.KAFKA_BOOTSTRAP + ")"));
            return broker;
        }, KafkaBroker.class);
    }

    /** The outermost class context above {@code context}, so nested classes share one broker. */
    private static ExtensionContext classContext(ExtensionContext context) {
        ExtensionContext owner = context;
        for (ExtensionContext c = context; c.getParent().isPresent(); c = c.getParent().get()) {
            if (c.getTestClass().isPresent() && c.getTestMethod().isEmpty()) {
                owner = c;
            }
        }
        return owner;
    }
}
