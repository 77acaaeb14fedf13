package dev.orderless.demo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.Backoff;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.OperationConsumer;
import dev.orderless.amqp10.Amqp10Publisher;
import dev.orderless.apply.ApplierOptions;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.backends.Backends;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.backends.rabbit.RabbitBackends;
import dev.orderless.broker.BrokerBlocking;
import dev.orderless.broker.QueueTopology;
import dev.orderless.history.History;
import dev.orderless.history.HistoryBaseline;
import dev.orderless.history.HistoryOptions;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.lease.MongoLeaseProvider;
import dev.orderless.outbox.Outbox;
import dev.orderless.outbox.OutboxOptions;
import dev.orderless.outbox.OutboxRelay;
import dev.orderless.outbox.RelayOptions;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.OperationPublisher;
import dev.orderless.publish.PublisherOptions;
import dev.orderless.stamp.MongoCounterStamper;
import dev.orderless.stamp.Stamper;
import dev.orderless.view.FeederOptions;
import dev.orderless.view.ViewFeeder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * What every command connects to and builds, in one place: the backends (a URI, else embedded for
 * {@code run}), the collections, the queues, the consumers and the roster feeder.
 *
 * <p>{@link #connect} fails fast, as a command line should: the MongoDB client waits at most
 * {@value #SELECT_SECONDS} s for a server and the AMQP connection at most {@value #CONNECT_SECONDS} s,
 * and both backends are checked before anything starts, so an unreachable one is one line naming its
 * URI, not a stack trace from a consumer thread half a minute later.
 */
final class Wiring implements AutoCloseable {
    static final int SELECT_SECONDS = 4;
    static final int CONNECT_SECONDS = 3;
    /** How long a channel opening may wait for RabbitMQ: the publisher's confirm timeout, not the client's 10 minutes. */
    static final int CHANNEL_RPC_SECONDS = 10;

    final DemoOptions options;
    final MongoBackend mongoBackend;
    final MongoClient client;
    final MongoDatabase db;
    final MongoCollection<BsonDocument> students;
    final MongoCollection<BsonDocument> rosters;
    final Journal journal;
    private final Optional<RabbitBackend> rabbitBackend;
    private final Optional<CachingConnectionFactory> rabbit;
    /** The deliveries this process's consumers hold, over either protocol (counted by the clients). */
    final HeldDeliveries held = new HeldDeliveries();
    /** One watcher per connection factory, made before its first connection: the broker says "blocked" once. */
    private final Optional<BrokerBlocking> blocking;
    /** {@code --protocol amqp-1.0}: the AMQP 1.0 client's environment and connection, opened when connecting. */
    private Optional<com.rabbitmq.client.amqp.Environment> amqp10 = Optional.empty();
    private Optional<com.rabbitmq.client.amqp.Connection> amqp10Connection = Optional.empty();
    /** {@code --broker kafka}: the broker, its topic and share group for this process. */
    private Optional<KafkaSide> kafka = Optional.empty();

    private Wiring(DemoOptions options, MongoBackend mongoBackend, Optional<RabbitBackend> rabbitBackend) {
        this.options = options;
        this.mongoBackend = mongoBackend;
        this.rabbitBackend = rabbitBackend;
        this.client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(mongoBackend.connectionString()))
                .applyToClusterSettings(c -> c.serverSelectionTimeout(SELECT_SECONDS, TimeUnit.SECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(CONNECT_SECONDS, TimeUnit.SECONDS))
                .writeConcern(WriteConcern.MAJORITY).build());
        this.db = client.getDatabase(options.database());
        this.students = db.getCollection(Enrollment.STUDENTS, BsonDocument.class);
        this.rosters = db.getCollection(Enrollment.ROSTERS, BsonDocument.class);
        this.journal = new Journal(db);
        this.rabbit = rabbitBackend.map(backend -> {
            CachingConnectionFactory factory;
            try {
                factory = new CachingConnectionFactory(backend.uri());
            } catch (IllegalArgumentException e) {
                throw unusable(backend);
            }
            factory.setConnectionTimeout(CONNECT_SECONDS * 1000);
            // a channel opened while RabbitMQ blocks the connection (a resource alarm) waits this long, not 10 min
            factory.getRabbitConnectionFactory().setChannelRpcTimeout(CHANNEL_RPC_SECONDS * 1000);
            factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.CORRELATED);
            factory.setPublisherReturns(true);
            factory.setChannelCacheSize(32);
            factory.setConnectionNameStrategy(f -> "orderless-demo-" + options.command());
            factory.getRabbitConnectionFactory().setMetricsCollector(held.amqp091());
            return factory;
        });
        this.blocking = rabbit.map(f -> BrokerBlocking.watch(f.getPublisherConnectionFactory(), new SimpleMeterRegistry(),
                "publisher"));
    }

    /**
     * The backends {@code options} name, checked to answer. An empty AMQP URI means none for every command
     * but {@code run} and {@code chaos}, which start embedded backends for what they are not given.
     */
    static Wiring connect(DemoOptions options) {
        boolean embeddedDefaults = options.command().equals("run") || options.command().equals("chaos");
        MongoBackend mongo;
        try {
            mongo = options.mongo().isPresent() ? Backends.mongo(options.mongo()) : Backends.startMongo();
        } catch (IllegalArgumentException e) {   // the test support's backends say what is wrong with the URI
            throw new InvalidConfigurationException(e.getMessage(), e);
        }
        Optional<RabbitBackend> rabbit = Optional.empty();
        Wiring wiring = null;
        try {
            if (options.broker() == Broker.KAFKA) {
                wiring = new Wiring(options, mongo, Optional.empty());
                wiring.checkReachable();
                wiring.kafka = Optional.of(KafkaSide.connect(options));
                return wiring;
            }
            try {
                rabbit = options.rabbit().isPresent() ? Optional.of(RabbitBackends.rabbit(options.rabbit()))
                        : embeddedDefaults ? Optional.of(RabbitBackends.startRabbit()) : Optional.empty();
            } catch (IllegalArgumentException e) {
                throw new InvalidConfigurationException(e.getMessage(), e);
            }
            wiring = new Wiring(options, mongo, rabbit);
            wiring.checkReachable();
            if (options.protocol() == Protocol.AMQP_1_0 && rabbit.isPresent()) {
                wiring.connectAmqp10();
            }
            return wiring;
        } catch (RuntimeException e) {
            if (wiring != null) {
                wiring.close();
            } else {
                rabbit.ifPresent(RabbitBackend::close);
                mongo.close();
            }
            throw e;
        }
    }

    private void checkReachable() {
        try {
            db.runCommand(new BsonDocument("ping", new BsonInt32(1)));
        } catch (MongoSecurityException e) {
            throw new InvalidConfigurationException("MongoDB at " + Uris.redacted(mongoBackend.connectionString())
                    + " refused the login: check the user, password and authSource in the URI (--mongo or MONGODB_URI)", e);
        } catch (MongoException e) {
            throw new TransientException("MongoDB at " + Uris.redacted(mongoBackend.connectionString())
                    + " did not answer within " + SELECT_SECONDS + " s: check that it is running and that the URI"
                    + " (--mongo or MONGODB_URI) names its host and port", e);
        }
        rabbit.ifPresent(factory -> {
            try {
                factory.createConnection().close();
            } catch (IllegalArgumentException e) {
                throw unusable(rabbitBackend.orElseThrow());
            } catch (AmqpException e) {
                java.util.Optional<String> refused = dev.orderless.broker.internal.BrokerRefusals.configurationProblem(e);
                if (refused.isPresent()) {   // the broker answered: waiting will not help, the URI must change
                    throw new InvalidConfigurationException("RabbitMQ at " + Uris.redacted(rabbitBackend.orElseThrow()
                            .uri().toString()) + ": " + refused.get() + " (--rabbit or RABBITMQ_URI)", e);
                }
                Throwable cause = e;
                while (cause.getCause() != null && cause.getCause() != cause) {
                    cause = cause.getCause();
                }
                throw new TransientException("RabbitMQ at " + Uris.redacted(rabbitBackend.orElseThrow().uri().toString())
                        + " cannot be reached (" + (cause.getMessage() == null ? cause.getClass().getSimpleName()
                        : cause.getMessage()) + "): check that it is running, and the URI (--rabbit or RABBITMQ_URI),"
                        + " its user, password and virtual host", e);
            }
        });
    }

    /**
     * Opens the AMQP 1.0 connection ({@code --protocol amqp-1.0}), so that a broker without AMQP 1.0 (RabbitMQ 3)
     * is one line now, not a consumer that retries for ever.
     */
    private void connectAmqp10() {
        String uri = rabbitUri();
        com.rabbitmq.client.amqp.Environment environment = new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder()
                .connectionSettings().uri(uri).environmentBuilder().build();
        amqp10 = Optional.of(environment);
        try {
            amqp10Connection = Optional.of(environment.connectionBuilder().name("orderless-demo-" + options.command())
                    .build());
        } catch (com.rabbitmq.client.amqp.AmqpException e) {
            Throwable cause = e;
            while ((cause.getMessage() == null || cause.getMessage().isBlank()) && cause.getCause() != null
                    && cause.getCause() != cause) {
                cause = cause.getCause();
            }
            throw new TransientException("the AMQP broker at " + Uris.redacted(uri) + " does not take an AMQP 1.0"
                    + " connection (" + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage())
                    + "): --protocol amqp-1.0 needs RabbitMQ 4 or later (not RabbitMQ 3, not serve's embedded broker);"
                    + " use --protocol amqp-0-9-1 with those", e);
        }
    }

    /** The Kafka side ({@code --broker kafka}). */
    KafkaSide kafka() {
        return kafka.orElseThrow(() -> new InvalidConfigurationException("'" + options.command()
                + "' was started without a Kafka broker"));
    }

    /** {@code --broker kafka}: the share-group consumers, {@code --consumers} of them, as {@link #startConsumers}. */
    dev.orderless.kafka.ShareGroupConsumer startShareConsumers(MeterRegistry meters) {
        return kafka().startConsumers(studentApplier(meters), options.consumers(), meters,
                options.history() ? Optional.of(baselined(history(meters))) : Optional.empty());
    }

    /** The AMQP URI, as given. */
    String rabbitUri() {
        return rabbitBackend.orElseThrow(() -> new InvalidConfigurationException("'" + options.command()
                + "' was started without an AMQP broker")).uri().toString();
    }

    /** The publisher {@code --protocol} asks for: confirms over AMQP 0-9-1, the accepted outcome over AMQP 1.0. */
    OperationPublisher operationPublisher(PublisherOptions publisherOptions) {
        if (options.protocol() == Protocol.AMQP_1_0) {
            return Amqp10Publisher.toQueue(amqp10Connection.orElseThrow(), options.queue(), publisherOptions);
        }
        return publisher(publisherOptions);
    }

    /** Not the driver's message: it may quote the password. */
    private static InvalidConfigurationException unusable(RabbitBackend backend) {
        return new InvalidConfigurationException("RabbitMQ URI " + Uris.redacted(backend.uri().toString())
                + " is not a usable AMQP URI: check the port (1 to 65535) and that the path is one segment,"
                + " the virtual host (%2F for '/')");
    }

    /** The AMQP connection factory; every command but {@code view} has one. */
    CachingConnectionFactory rabbit() {
        return rabbit.orElseThrow(() -> new InvalidConfigurationException("'" + options.command()
                + "' was started without an AMQP broker"));
    }

    /** A publisher to the work queue on the publisher connection, told of a broker block by the shared watcher. */
    ConfirmingPublisher publisher(PublisherOptions publisherOptions) {
        return ConfirmingPublisher.builder(rabbit()).toQueue(options.queue()).options(publisherOptions)
                .blocking(blocking.orElseThrow()).build();
    }

    QueueTopology.Declared declareQueues() {
        return QueueTopology.declare(rabbit(), options.queue(), options.deadLetterQueue());
    }

    GuardedApplier studentApplier(MeterRegistry meters) {
        return GuardedApplier.create(students, Enrollment.STUDENT_SCHEMA, ApplierOptions.ofDefaults().withMeters(meters));
    }

    OperationConsumer startConsumers(MeterRegistry meters) {
        OperationConsumer.Builder builder = OperationConsumer.builder(rabbit(), studentApplier(meters))
                .options(ConsumerOptions.ofDefaults(options.queue()).withDeadLetterQueue(options.deadLetterQueue())
                        .withConcurrency(options.consumers()))
                .meters(meters);
        if (options.history()) {
            builder.history(baselined(history(meters)));
        }
        return builder.start();
    }

    private History baselined(History history) {
        baseline(history);
        return history;
    }

    /** The students' version history ({@code --history}), checking its reads against the students. */
    History history(MeterRegistry meters) {
        return History.of(db.getCollection(Enrollment.STUDENTS_HISTORY, BsonDocument.class), Enrollment.STUDENT_SCHEMA,
                HistoryOptions.ofDefaults().withMeters(meters)).withLive(students);
    }

    /**
     * The history's baseline, as {@code consume --history} runs it through Spring Boot with
     * {@code orderless.history.baseline.enabled=true}: decided before the consumer starts, then the students already
     * in MongoDB taken into the history, once across processes ({@code run} starts from an empty collection, so
     * at once). A pass another process is running is that one's: reads of the students it has not reached say
     * they cannot tell until it has.
     */
    private void baseline(History history) {
        history.beginBaseline(HistoryBaseline.Start.RUN);
        HistoryBaseline baseline = HistoryBaseline.create(history,
                MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), LeaseOptions.ofDefaults()),
                "demo " + ManagementFactory.getRuntimeMXBean().getName(), Duration.ofMinutes(1));
        baseline.runIfDue();
    }

    /** The web application's stamper: a counter per student. */
    Stamper stamper() {
        return MongoCounterStamper.create(db.getCollection(Enrollment.COUNTERS, BsonDocument.class));
    }

    MongoCollection<BsonDocument> outboxEntries() {
        return db.getCollection(Enrollment.OUTBOX, BsonDocument.class);
    }

    /** Where {@code --outbox} records the actions; no broker involved. */
    Outbox outbox() {
        return Outbox.create(outboxEntries(), stamper(), OutboxOptions.ofDefaults());
    }

    /**
     * A relay from the outbox to the work queue. Its publisher sends each batch twice at most: the relay
     * itself retries, with back-off, for as long as the broker is away.
     */
    OutboxRelay startRelay(MeterRegistry meters, int batch, Duration claimTtl) {
        ConfirmingPublisher publisher = publisher(PublisherOptions.ofDefaults().withMaxAttempts(2).withMeters(meters));
        return OutboxRelay.start(outboxEntries(), publisher, RelayOptions.ofDefaults().withBatch(batch)
                .withClaimTtl(claimTtl).withBackoff(Backoff.of(Duration.ofMillis(100), Duration.ofSeconds(2)))
                .withOwner("relay " + ManagementFactory.getRuntimeMXBean().getName()).withMeters(meters));
    }

    ViewFeeder startRosterFeeder(MeterRegistry meters) {
        LeaseOptions lease = LeaseOptions.ofDefaults();
        return ViewFeeder.builder(db, Enrollment.STUDENTS, GuardedApplier.create(rosters, Enrollment.ROSTER_SCHEMA),
                        new ClassRosterProjection(),
                        MongoLeaseProvider.create(db.getCollection("leases", BsonDocument.class), lease))
                .options(FeederOptions.ofDefaults(Enrollment.ROSTER_LEASE).withLease(lease))
                .meters(meters)
                .client(client)
                .start();
    }

    private static void abort(org.springframework.amqp.rabbit.connection.ConnectionFactory factory) {
        try {
            factory.createConnection().getDelegate().abort(1000);
        } catch (RuntimeException e) {
            // already gone: nothing to wait for
        }
    }

    String describe() {
        return "MongoDB: " + mongoBackend.description() + ", database '" + options.database() + "'"
                + kafka.map(k -> "\nKafka:   " + k.describe()).orElse("")
                + rabbitBackend.map(r -> "\nAMQP:    " + r.description() + ", queue '" + options.queue()
                + "' (dead letters: '" + options.deadLetterQueue() + "')").orElse("");
    }

    /**
     * Closes everything. A connection the broker blocks (a resource alarm) is aborted first: closing it
     * politely would wait for a broker that reads nothing from it until its heartbeat gives up (a minute).
     */
    @Override
    public void close() {
        if (blocking.flatMap(BrokerBlocking::reason).isPresent()) {
            rabbit.ifPresent(f -> abort(f.getPublisherConnectionFactory()));
        }
        blocking.ifPresent(BrokerBlocking::close);
        amqp10.ifPresent(com.rabbitmq.client.amqp.Environment::close);   // and its connection
        rabbit.ifPresent(CachingConnectionFactory::destroy);
        client.close();
        kafka.ifPresent(KafkaSide::close);
        rabbitBackend.ifPresent(RabbitBackend::close);
        mongoBackend.close();
    }
}
