package dev.orderless.publish.boot;

import com.mongodb.client.MongoClient;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.boot.OrderlessProperties;
import dev.orderless.boot.internal.OptionProperties;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.publish.StampingPublisher;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.stamp.Stamper;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.Optional;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.amqp.autoconfigure.RabbitTemplateConfigurer;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The stamping publisher in a Spring Boot 4 application: a {@link StampingPublisher} bean that a web
 * controller calls instead of writing to MongoDB. Active with one {@link MongoClient}, one Rabbit
 * {@link ConnectionFactory} (Boot's {@code spring-boot-amqp}), unless {@code orderless.publisher.enabled=false};
 * {@code orderless.database} is required (a start without it fails, naming it).
 * <ol>
 *   <li>a {@link Stamper}: seq counters in {@code orderless.publisher.counters} (unless the application
 *       has its own, a {@code HybridLogicalClock} say);
 *   <li>a {@link ConfirmingPublisher} on a {@link RabbitTemplate} made by Boot's
 *       {@link RabbitTemplateConfigurer} ({@code spring.rabbitmq.template.*}), mandatory, with confirms, to
 *       {@code orderless.publisher.exchange}/{@code routing-key} (by default the consumer's queue), and an
 *       {@code orderless.publish} observation per send;
 *   <li>the {@link StampingPublisher} of both.
 * </ol>
 * The publisher needs confirms and returns: {@code spring.rabbitmq.publisher-confirm-type=correlated} and
 * {@code spring.rabbitmq.publisher-returns=true}. Without {@code orderless.publisher.enabled}, the confirm
 * type decides: an application that only consumes (no confirms) gets no publisher and no stamper, with one
 * INFO line saying how to get them. With {@code orderless.publisher.enabled=true} and no confirms or returns,
 * the start fails, naming the properties.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration",
        "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration",
        "dev.orderless.boot.OrderlessAutoConfiguration"})
@ConditionalOnClass(value = {MongoClient.class, RabbitTemplate.class, RabbitTemplateConfigurer.class},
        name = "dev.orderless.publish.StampingPublisher")   // orderless-producer-stamping is optional here
@ConditionalOnSingleCandidate(MongoClient.class)
@EnableConfigurationProperties(OrderlessProperties.class)
public class OrderlessPublisherAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(OrderlessPublisherAutoConfiguration.class);
    private static final String ENABLED = "orderless.publisher.enabled";
    private static final String CONFIRM_TYPE = "spring.rabbitmq.publisher-confirm-type";

    /** The publisher's beans: with {@code orderless.publisher.enabled=true}, or unset and correlated confirms. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(Publishing.class)
    static class Publisher {

        @Bean
        @ConditionalOnMissingBean
        Stamper orderlessStamper(MongoClient client, OrderlessProperties properties) {
            return MongoCounterStamper.create(properties.database(client)
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
            return ConfirmingPublisher.builder(template).toExchange(exchange, routingKey).options(options(publisher)
                    .withMeters(meters.getIfAvailable(SimpleMeterRegistry::new))
                    .withObservations(observations.getIfAvailable(() -> ObservationRegistry.NOOP))).build();
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(ConfirmingPublisher.class)
        StampingPublisher orderlessStampingPublisher(Stamper stamper, ConfirmingPublisher publisher) {
            return new StampingPublisher(stamper, publisher);
        }
    }

    /** Says once why an application without confirms has no publisher, unless it said it wants none. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(NotPublishing.class)
    static class NoPublisher {
        NoPublisher() {
            log.info("no orderless publisher: {} is not correlated. To publish with StampingPublisher, set it to"
                    + " correlated and spring.rabbitmq.publisher-returns=true; to silence this, set {}=false",
                    CONFIRM_TYPE, ENABLED);
        }
    }

    static class Publishing extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            Binder binder = Binder.get(context.getEnvironment());
            Optional<Boolean> enabled = Optional.ofNullable(binder.bind(ENABLED, Boolean.class).orElse(null));
            if (enabled.isPresent()) {
                return new ConditionOutcome(enabled.get(), ENABLED + "=" + enabled.get());
            }
            String confirms = binder.bind(CONFIRM_TYPE, String.class).orElse("none");
            return new ConditionOutcome("correlated".equalsIgnoreCase(confirms), ENABLED + " unset and " + CONFIRM_TYPE
                    + "=" + confirms);
        }
    }

    /** Neither asked for nor refused, and no confirms: the publisher is left out, and says so. */
    static class NotPublishing extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            boolean unset = Binder.get(context.getEnvironment()).bind(ENABLED, Boolean.class).orElse(null) == null;
            ConditionOutcome publishing = new Publishing().getMatchOutcome(context, metadata);
            return new ConditionOutcome(unset && !publishing.isMatch(), publishing.getConditionMessage());
        }
    }

    /** {@code orderless.publisher.*} over the defaults; a value out of range fails, naming the property. */
    static PublisherOptions options(OrderlessProperties.Publisher publisher) {
        return OptionProperties.under("orderless.publisher", () -> {
            PublisherOptions options = PublisherOptions.ofDefaults();
            if (publisher.confirmTimeout() != null) {
                options = options.withConfirmTimeout(publisher.confirmTimeout());
            }
            if (publisher.maxAttempts() != null) {
                options = options.withMaxAttempts(publisher.maxAttempts());
            }
            options = options.withBackoff(publisher.backoff().over(options.backoff()));
            if (publisher.window() != null) {
                options = options.withWindow(publisher.window());
            }
            return options;
        });
    }
}
