package dev.orderless.publish.boot;

import com.mongodb.client.MongoClient;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.stamp.Stamper;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.bson.BsonDocument;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.RabbitTemplateConfigurer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The stamping publisher in a Spring Boot 4 application: a {@link StampingPublisher} bean that a web
 * controller calls instead of writing to MongoDB. Active with one {@link MongoClient}, one Rabbit
 * {@link ConnectionFactory} (Boot's {@code spring-boot-amqp}) and {@code orderless.database}, unless
 * {@code orderless.publisher.enabled=false}.
 * <ol>
 *   <li>a {@link Stamper}: seq counters in {@code orderless.publisher.counters} (unless the application
 *       has its own, a {@code HybridLogicalClock} say);
 *   <li>a {@link ConfirmingPublisher} on a {@link RabbitTemplate} made by Boot's
 *       {@link RabbitTemplateConfigurer} ({@code spring.rabbitmq.template.*}), mandatory, with confirms, to
 *       {@code orderless.publisher.exchange}/{@code routing-key} (by default the consumer's queue), and an
 *       {@code orderless.publish} observation per send;
 *   <li>the {@link StampingPublisher} of both.
 * </ol>
 * The connection factory needs {@code spring.rabbitmq.publisher-confirm-type=correlated} and
 * {@code spring.rabbitmq.publisher-returns=true}; without them the start fails, saying so.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration",
        "dev.orderless.boot.OrderlessAutoConfiguration"})
@ConditionalOnClass({MongoClient.class, RabbitTemplate.class, RabbitTemplateConfigurer.class})
@ConditionalOnSingleCandidate(MongoClient.class)
@ConditionalOnProperty(prefix = "orderless", name = "database")
@ConditionalOnBooleanProperty(name = "orderless.publisher.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessPublisherAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    Stamper orderlessStamper(MongoClient client, OrderlessProperties properties) {
        return MongoCounterStamper.create(client.getDatabase(properties.database())
                .getCollection(properties.publisher().counters(), BsonDocument.class));
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(ConnectionFactory.class)
    ConfirmingPublisher orderlessConfirmingPublisher(ConnectionFactory connectionFactory, OrderlessProperties properties,
                                                     Environment environment, ApplicationContext context,
                                                     ObjectProvider<RabbitTemplateConfigurer> configurers,
                                                     ObjectProvider<MeterRegistry> meters,
                                                     ObjectProvider<ObservationRegistry> observations) {
        OrderlessProperties.Publisher publisher = properties.publisher();
        if (!connectionFactory.isPublisherConfirms() || !connectionFactory.isPublisherReturns()) {
            throw new InvalidConfigurationException("orderless.publisher needs confirms and returns from the RabbitMQ"
                    + " connection factory: set spring.rabbitmq.publisher-confirm-type=correlated and"
                    + " spring.rabbitmq.publisher-returns=true (or orderless.publisher.enabled=false in an application"
                    + " that does not publish)");
        }
        Binder binder = Binder.get(environment);
        String exchange = publisher.exchange() != null ? publisher.exchange()
                : binder.bind("spring.rabbitmq.template.exchange", String.class).orElse("");
        String routingKey = publisher.routingKey() != null ? publisher.routingKey()
                : binder.bind("spring.rabbitmq.template.routing-key", String.class)
                .orElse(properties.consumer().queue());
        if (routingKey == null || routingKey.isBlank()) {
            throw new InvalidConfigurationException("orderless.publisher.routing-key is not set: name the work queue"
                    + " (or set orderless.consumer.queue), or set orderless.publisher.enabled=false");
        }
        RabbitTemplate template = new RabbitTemplate(connectionFactory);
        RabbitTemplateConfigurer configurer = configurers.getIfAvailable();
        if (configurer != null) {
            configurer.configure(template, connectionFactory);
        }
        template.setApplicationContext(context);   // Boot's template observation, if enabled, finds its registry
        return ConfirmingPublisher.on(template, exchange, routingKey, options(publisher)
                .withMeters(meters.getIfAvailable(SimpleMeterRegistry::new))
                .withObservations(observations.getIfAvailable(() -> ObservationRegistry.NOOP)), null);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(ConfirmingPublisher.class)
    StampingPublisher orderlessStampingPublisher(Stamper stamper, ConfirmingPublisher publisher) {
        return new StampingPublisher(stamper, publisher);
    }

    /** {@code orderless.publisher.*} over the defaults; a value out of range fails, naming the property. */
    static PublisherOptions options(OrderlessProperties.Publisher publisher) {
        PublisherOptions options = PublisherOptions.ofDefaults();
        try {
            if (publisher.confirmTimeout() != null) {
                options = options.withConfirmTimeout(publisher.confirmTimeout());
            }
            if (publisher.maxAttempts() != null) {
                options = options.withMaxAttempts(publisher.maxAttempts());
            }
            if (publisher.retryPause() != null) {
                options = options.withRetryPause(publisher.retryPause());
            }
            if (publisher.window() != null) {
                options = options.withWindow(publisher.window());
            }
            return options;
        } catch (InvalidConfigurationException e) {
            throw new InvalidConfigurationException(e.getMessage().replaceFirst("^publisher options: ", "orderless.publisher.")
                    .replace("confirmTimeout", "confirm-timeout").replace("maxAttempts", "max-attempts")
                    .replace("retryPause", "retry-pause"));
        }
    }
}
