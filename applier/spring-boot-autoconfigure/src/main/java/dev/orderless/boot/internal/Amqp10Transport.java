package dev.orderless.boot.internal;

import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import com.rabbitmq.client.amqp.metrics.MetricsCollector;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp10.Amqp10Consumer;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.history.History;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.Optional;
import org.springframework.amqp.AmqpConnectException;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;

/**
 * {@code orderless.consumer.protocol=amqp-1.0}: the {@link Amqp10Consumer} on a connection of its own, opened
 * from Spring Boot's RabbitMQ connection details ({@code spring.rabbitmq.host}, {@code port}, {@code username},
 * {@code password}, {@code virtual-host}, or {@code addresses}: every one, so a cluster's nodes all serve), with the
 * application's {@code com.rabbitmq.client.amqp.metrics.MetricsCollector} bean if it has one. Only loaded when chosen, so that
 * {@code orderless-rabbit-amqp10} stays optional.
 */
public final class Amqp10Transport {
    /** The class that tells whether {@code orderless-rabbit-amqp10} is on the class path. */
    public static final String CONSUMER_CLASS = "dev.orderless.amqp10.Amqp10Consumer";

    private Amqp10Transport() {
    }

    /** An AMQP URI for the client: user, password and virtual host percent-encoded ('/' is %2F). */
    static String uri(RabbitConnectionDetails.Address address, String username, String password, String virtualHost) {
        return "amqp://" + encoded(username) + ":" + encoded(password) + "@" + address.host() + ":" + address.port()
                + "/" + encoded(virtualHost);
    }

    private static String encoded(String part) {
        return java.net.URLEncoder.encode(part, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String addresses(RabbitConnectionDetails details) {
        return details.getAddresses().stream().map(a -> a.host() + ":" + a.port())
                .collect(java.util.stream.Collectors.joining(","));
    }

    /** The first message along {@code e}'s causes: the client's own is often empty. */
    private static String why(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }
        return e.getClass().getSimpleName();
    }

    /**
     * What starts the consumer, once its queues are declared. One environment (the client's threads) serves every
     * attempt until one connects, and the consumer after: an environment per attempt left a thread behind each
     * time the broker did not answer.
     */
    public static ConsumerStarter starter(RabbitConnectionDetails details, GuardedApplier applier,
                                          ConsumerOptions options, MeterRegistry meters,
                                          ObservationRegistry observations, Optional<History> history,
                                          dev.orderless.message.OperationDecoder decoder,
                                          org.springframework.beans.factory.BeanFactory beans) {
        if (details.getSslBundle() != null) {
            throw new InvalidConfigurationException("orderless.consumer.protocol=amqp-1.0 does not take"
                    + " spring.rabbitmq.ssl yet: use amqp-0-9-1 over TLS, or a plain connection");
        }
        return new ConsumerStarter() {
            private Optional<Environment> environment = Optional.empty();
            private final java.util.concurrent.atomic.AtomicInteger turn = new java.util.concurrent.atomic.AtomicInteger();

            @Override
            public synchronized RunningConsumer start() {
                Environment env = environment.orElseGet(() -> {
                    AmqpEnvironmentBuilder builder = new AmqpEnvironmentBuilder();
                    // the application's metrics collector for the AMQP 1.0 client, where it has one
                    MetricsCollector metrics = beans.getBeanProvider(MetricsCollector.class).getIfUnique();
                    if (metrics != null) {
                        builder.metricsCollector(metrics);
                    }
                    // unset, as Spring Boot's own RabbitMQ connection takes them: guest / guest
                    String username = details.getUsername() == null ? "guest" : details.getUsername();
                    String password = details.getPassword() == null ? "guest" : details.getPassword();
                    String virtualHost = details.getVirtualHost() == null ? "/" : details.getVirtualHost();
                    // every address (a cluster's nodes), taken in turn: the client picks one per connection and per
                    // recovery, at random by default, and a first connection does not try another when its pick is down
                    return builder.connectionSettings()
                            .uris(details.getAddresses().stream().map(a -> uri(a, username, password, virtualHost))
                                    .toArray(String[]::new))
                            .addressSelector(addresses -> addresses.get(Math.floorMod(turn.getAndIncrement(),
                                    addresses.size())))
                            .username(username).password(password).virtualHost(virtualHost)
                            .environmentBuilder().build();
                });
                environment = Optional.of(env);
                Connection opened = null;
                AmqpException failed = null;
                // one try per address: with a node down, the next one answers in this start, not the watch's next
                for (int attempt = 0; attempt < details.getAddresses().size() && opened == null; attempt++) {
                    try {
                        opened = env.connectionBuilder().name("orderless-" + options.queue()).build();
                    } catch (AmqpException e) {
                        failed = e;
                    }
                }
                if (opened == null) {
                    AmqpException e = failed;
                    // as the AMQP 0-9-1 side says it: the broker does not answer, and the bean tries again
                    throw new AmqpConnectException("AMQP 1.0 connection to " + addresses(details)
                            + " (virtual host '" + (details.getVirtualHost() == null ? "/" : details.getVirtualHost())
                            + "') failed (" + why(e) + "); RabbitMQ speaks AMQP 1.0 from version 4 on", e);
                }
                Connection connection = opened;
                try {
                    Amqp10Consumer.Builder builder = Amqp10Consumer.builder(connection, applier).options(options)
                            .meters(meters).observations(observations).decoder(decoder);
                    history.ifPresent(builder::history);
                    Amqp10Consumer consumer = builder.start();
                    return RunningConsumer.of(consumer::isRunning, consumer::retrying, consumer::waitingFor, () -> {
                        try {
                            consumer.close();
                        } finally {
                            connection.close();
                        }
                    });
                } catch (AmqpException e) {
                    connection.close();
                    // the broker did not answer in time, or the queue has no leader yet: the bean tries again
                    throw new AmqpConnectException("AMQP 1.0 consumer on '" + options.queue() + "' not started ("
                            + why(e) + ")", e);
                } catch (RuntimeException e) {
                    connection.close();
                    throw e;
                }
            }

            @Override
            public synchronized void close() {
                environment.ifPresent(Environment::close);
                environment = Optional.empty();
            }
        };
    }
}
