package dev.orderless.boot;

import dev.orderless.InvalidConfigurationException;
import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.boot.internal.OptionProperties;
import dev.orderless.lease.LeaseOptions;
import dev.orderless.view.FeederOptions;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code orderless.*}: where the entities live and how they are consumed. A consumer option left unset
 * falls back to Spring Boot's {@code spring.rabbitmq.listener.simple.*} where one has the same meaning
 * (concurrency, prefetch, batch-size), then to {@link ConsumerOptions#ofDefaults(String)}.
 *
 * <pre>
 * orderless.database=school
 * orderless.collection=students
 * orderless.consumer.queue=enrollment.ops
 * orderless.consumer.concurrency=4
 * </pre>
 *
 * @param database   the MongoDB database of the entity collection
 * @param collection the entity collection the consumer applies to
 * @param consumer   the consumer; none is started without {@code orderless.consumer.queue}
 * @param leases     the collection of the views' leases, in {@code orderless.database}
 * @param view       per {@link OrderlessView} name: how its feeder runs
 * @param compaction scheduled tombstone compaction of {@code orderless.collection}
 * @param publisher  the stamping publisher (orderless-producer-stamping's auto-configuration)
 * @param outbox     the outbox and its relay (orderless-producer-stamping's auto-configuration)
 * @param history    the version history of {@code orderless.collection}
 * @param console    the operator console (orderless-console's auto-configuration)
 * @param kafka      the Kafka share-group consumer (orderless-kafka and spring-kafka on the class path); none is
 *                   started without {@code orderless.kafka.topic}
 * @param writeConcern how orderless writes to MongoDB: {@code majority} (default: an apply, a record, an outbox entry
 *                   is acknowledged once a majority of the replica set has it, so a primary's failover cannot lose it
 *                   while its message is acked), or {@code client}: the write concern of Boot's MongoDB client (say
 *                   {@code ?w=majority} in {@code spring.mongodb.uri}); weaker than majority, it is said at start-up
 */
@ConfigurationProperties(prefix = "orderless", ignoreUnknownFields = false)   // a typo fails the start
public record OrderlessProperties(String database, String collection, @DefaultValue Consumer consumer,
                                  @DefaultValue("orderless_leases") String leases, Map<String, View> view,
                                  @DefaultValue Compaction compaction, @DefaultValue Publisher publisher,
                                  @DefaultValue Outbox outbox, @DefaultValue History history,
                                  @DefaultValue("majority") WriteConcernSetting writeConcern,
                                  @DefaultValue Console console, @DefaultValue Kafka kafka) {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(OrderlessProperties.class);

    /**
     * {@code orderless.console.*}: whether the operator console is served (orderless-console, in a servlet web
     * application), where, who may act on it, and the MongoDB collections it keeps its letters, its audit and the
     * fleet's reports in (all in {@code orderless.database}).
     *
     * @param enabled    serve it (false by default); an instance serving it also reports itself to the fleet
     * @param path       where: the page at {@code <path>/}, its JSON under {@code <path>/api} ({@code /orderless/console})
     * @param actionRole the role a user needs to replay, edit, park, un-park or purge dead letters
     *                   ({@code ORDERLESS_OPERATOR}: Spring Security's authority {@code ROLE_ORDERLESS_OPERATOR}); anyone
     *                   the application's security lets see the page sees it read-only
     * @param letters    where the dead letters are kept for browsing, and for how long once dealt with
     * @param audit      the collection every console action is recorded in ({@code orderless_console_audit})
     * @param fleet      where each instance reports itself, and how often
     * @param managementUrl RabbitMQ's management API ({@code http://host:15672}), read with Boot's RabbitMQ username
     *                   and password for each work queue's unacknowledged count; without it the backlog shows the
     *                   ready count and consumers, which AMQP itself tells
     */
    public record Console(@DefaultValue("false") boolean enabled, @DefaultValue("/orderless/console") String path,
                          @DefaultValue("ORDERLESS_OPERATOR") String actionRole, @DefaultValue Letters letters,
                          @DefaultValue("orderless_console_audit") String audit, @DefaultValue Fleet fleet,
                          Optional<java.net.URI> managementUrl) {
        /** Refuses a path that is not absolute or ends in a slash, and a role written with its prefix, naming the property. */
        public Console {
            if (path == null || !path.startsWith("/") || path.endsWith("/") || path.contains("{")) {
                throw InvalidConfigurationException.refused("orderless.console.path",
                        "must start with '/' and not end with one (as /orderless/console), was '" + path + "'");
            }
            if (actionRole == null || actionRole.isBlank() || actionRole.startsWith("ROLE_")) {
                throw InvalidConfigurationException.refused("orderless.console.action-role",
                        "must name a role without the ROLE_ prefix (as ORDERLESS_OPERATOR), was '" + actionRole + "'");
            }
            requireCollection("orderless.console.audit", audit);
            managementUrl = managementUrl == null ? Optional.empty() : managementUrl;
            managementUrl.ifPresent(url -> {
                if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme()) || url.getHost() == null) {
                    throw InvalidConfigurationException.refused("orderless.console.management-url",
                            "must be RabbitMQ's management API as http(s)://host:port (as http://localhost:15672), was '"
                                    + url + "'");
                }
            });
        }

        /**
         * {@code orderless.console.letters.*}: the dead letters, moved from each consumer's dead-letter queue into a
         * MongoDB collection where the console searches and acts on them (docs/decisions/0009).
         *
         * @param collection where they are kept ({@code orderless_dead_letters})
         * @param retention  how long a letter replayed or purged is kept after that (for the record), {@code P14D};
         *                   a letter not dealt with is kept until it is
         */
        public record Letters(@DefaultValue("orderless_dead_letters") String collection,
                              @DefaultValue("P14D") java.time.Duration retention) {
            /** Refuses an empty collection name and a retention that is not positive. */
            public Letters {
                requireCollection("orderless.console.letters.collection", collection);
                if (retention == null || retention.isNegative() || retention.isZero()) {
                    throw InvalidConfigurationException.refused("orderless.console.letters.retention",
                            "must be positive (as P14D), was " + retention);
                }
            }
        }

        /**
         * {@code orderless.console.fleet.*}: each instance serving the console (or with {@code report=true}) writes
         * what runs in it to one collection every {@code interval}, so any instance's page shows them all; an
         * instance silent for three intervals is shown gone.
         *
         * @param collection where the reports are ({@code orderless_instances})
         * @param interval   how often an instance reports ({@code 5s})
         * @param report     report this instance even where it does not serve the page (a consumer without a web
         *                   server); an instance serving the page reports anyway
         */
        public record Fleet(@DefaultValue("orderless_instances") String collection,
                            @DefaultValue("5s") java.time.Duration interval, @DefaultValue("false") boolean report) {
            /** Refuses an empty collection name and an interval under a second. */
            public Fleet {
                requireCollection("orderless.console.fleet.collection", collection);
                if (interval == null || interval.compareTo(java.time.Duration.ofSeconds(1)) < 0) {
                    throw InvalidConfigurationException.refused("orderless.console.fleet.interval",
                            "must be at least 1s (as 5s), was " + interval);
                }
            }
        }

        private static void requireCollection(String property, String name) {
            if (name == null || name.isBlank() || name.contains("$")) {
                throw InvalidConfigurationException.refused(property, "must name a MongoDB collection, was '" + name
                        + "'");
            }
        }
    }

    /**
     * {@code orderless.kafka.*}: a consumer of a Kafka share group (KIP-932) applying to {@code orderless.collection},
     * where the application has {@code dev.orderless:orderless-kafka} and Spring Boot's Kafka support
     * ({@code spring-kafka}, {@code spring-boot-kafka}). It connects as Spring Boot's {@code spring.kafka.*} says
     * (bootstrap servers, security, {@code spring.kafka.consumer.properties.*}); these properties say what it consumes.
     * Anything unset keeps {@code ShareConsumerOptions.ofDefaults(topic, group)}'s value.
     *
     * @param enabled         false: no Kafka consumer even with a topic (true)
     * @param topic           the topic the operations are produced to (record key: the entity); the consumer starts
     *                        only with it
     * @param group           the share group every instance of this application joins; required with a topic. Not the
     *                        id of a consumer group: Kafka refuses a group id used by both kinds
     * @param deadLetterTopic where poison goes, with orderless's reason headers; default: the topic + {@code .dlt}
     * @param concurrency     share consumers (a thread each) in this instance
     * @param maxPollRecords  records per poll, applied together with one bulk write
     * @param pollTimeout     how long one poll waits for records
     * @param maxHold         how long one record may keep failing while MongoDB applies others before it is
     *                        dead-lettered
     * @param backoff         the pauses between attempts at a record MongoDB could not take (held meanwhile)
     * @param shutdownTimeout how long stopping lets a poll being applied finish before its records are released
     * @param declare         create the topic and the dead-letter topic where missing and set the share group to read
     *                        from the earliest record, at start-up (true); false where topics are managed elsewhere
     *                        (the consumer then checks that both exist)
     * @param partitions      the topic's partitions where {@code declare} creates it (1; the dead-letter topic has
     *                        one): a share group needs no more partitions than consumers
     * @param envelope        how records in the canonical envelope are read
     */
    public record Kafka(@DefaultValue("true") boolean enabled, String topic, String group, String deadLetterTopic,
                        Integer concurrency, Integer maxPollRecords, Duration pollTimeout, Duration maxHold,
                        @DefaultValue BackoffProperties backoff, Duration shutdownTimeout,
                        @DefaultValue("true") boolean declare, @DefaultValue("1") int partitions,
                        @DefaultValue EnvelopeProperties envelope) {
        /** Refuses a partition count under 1, naming the property. */
        public Kafka {
            if (partitions < 1) {
                throw InvalidConfigurationException.refused("orderless.kafka.partitions", "must be 1 or more, was "
                        + partitions);
            }
        }

    }

    /** {@code orderless.write-concern}. */
    public enum WriteConcernSetting {
        /** Every orderless write acknowledged by a majority of the replica set. */
        MAJORITY,
        /** The write concern of Boot's MongoDB client, as {@code spring.mongodb.uri} sets it. */
        CLIENT
    }

    /**
     * {@code orderless.database} on {@code client}, with the write concern {@code orderless.write-concern} makes
     * explicit: majority, or the client's own, said at WARN when it is weaker than majority.
     */
    public com.mongodb.client.MongoDatabase database(com.mongodb.client.MongoClient client) {
        com.mongodb.client.MongoDatabase database = client.getDatabase(requiredDatabase());
        if (writeConcern == WriteConcernSetting.MAJORITY) {
            // w only: a wtimeout or journal the client's URI sets stays, so a write never waits longer than it says
            return database.withWriteConcern(database.getWriteConcern().withW("majority"));
        }
        com.mongodb.WriteConcern own = database.getWriteConcern();
        Object w = own.getWObject();
        if (!"majority".equals(w) && !(w instanceof Integer n && n > 1)) {
            log.warn("orderless.write-concern=client: MongoDB's write concern for '{}' is {}: an apply acknowledged by"
                    + " a primary that fails over before a majority has it can be lost while its message is acked; set"
                    + " ?w=majority in spring.mongodb.uri, or orderless.write-concern=majority (the default)",
                    database.getName(), w == null ? "the server's default (w: 1)" : "w: " + w);
        }
        return database;
    }

    /**
     * {@code orderless.history.*}: a {@code dev.orderless.history.History} bean, and the consumer records every
     * operation in it before applying it.
     *
     * @param enabled    keep the history (false)
     * @param collection the history collection, in {@code orderless.database}; default {@code orderless.collection}
     *                   + {@code _history}
     * @param retention  fold old records into one state per entity; without {@code keep}, every version is kept
     * @param baseline   take the live documents into the history at start-up, once across every instance
     */
    public record History(@DefaultValue("false") boolean enabled, String collection, @DefaultValue Retention retention,
                          @DefaultValue Baseline baseline) {
        /**
         * {@code orderless.history.baseline.*}: the live documents taken into the history, so that reads can vouch
         * for entities that had operations before the history was on (a {@code dev.orderless.history.HistoryBaseline}),
         * decided at start-up, before the consumer starts, and recorded in the history collection (a later start, in
         * any instance, finds it there and resumes a baseline under way whatever this says).
         *
         * @param enabled unset: decided from the collections (an empty collection and history: none needed; documents
         *                and an empty history: the baseline runs; documents and a history with records, no baseline
         *                ever begun: the start fails, asking for true or false). {@code true}: the baseline runs
         *                (the history was turned on over existing data). {@code false}: the history has been on
         *                since the collection's first write: the baseline is recorded complete without reading, and no
         *                recorded version becomes unknowable
         */
        public record Baseline(Boolean enabled) {
        }

        /**
         * @param keep     how long a record stays a version of its own: longer than any message can take to
         *                 arrive, and at least {@code orderless.compaction.grace} where that is set
         * @param interval the least time between two passes, across every instance (1h)
         */
        public record Retention(Duration keep, @DefaultValue("1h") Duration interval) {
            public Retention {
                if (keep != null && (keep.isNegative() || keep.isZero())) {
                    throw new InvalidConfigurationException("orderless.history.retention.keep must be a positive"
                            + " duration, was " + keep + "; leave it unset to keep every version");
                }
                if (interval == null || interval.isNegative() || interval.isZero()) {
                    throw new InvalidConfigurationException("orderless.history.retention.interval must be a positive"
                            + " duration, was " + interval);
                }
            }
        }
    }

    /** {@code orderless.history.collection}, or the entity collection's name + {@code _history}. */
    public String historyCollection() {
        return history.collection() != null && !history.collection().isBlank() ? history.collection()
                : dev.orderless.history.History.collectionName(requiredCollection());
    }

    /**
     * {@code orderless.history.retention.keep}, refused if shorter than the compaction grace: an operation
     * may arrive as late as the grace allows, and one recorded below its entity's folded horizon makes that
     * entity's history unknowable.
     */
    public Optional<Duration> historyKeep() {
        Optional<Duration> keep = Optional.ofNullable(history.retention().keep());
        if (keep.isPresent() && replayGrace().isPresent() && keep.get().compareTo(compaction.grace()) < 0) {
            throw new InvalidConfigurationException("orderless.history.retention.keep (" + keep.get() + ") is shorter"
                    + " than orderless.compaction.grace (" + compaction.grace() + "): an operation may arrive as late as"
                    + " the grace, and one recorded below a folded horizon makes its entity's history unknowable; set"
                    + " keep to at least the grace");
        }
        return keep;
    }

    /**
     * {@code orderless.outbox.*}: an {@code Outbox} bean and a relay, where orderless-producer-stamping is on
     * the class path.
     *
     * @param enabled    an {@code Outbox} bean (false)
     * @param collection the outbox collection, in {@code orderless.database}
     * @param maxBacklog entries waiting before {@code record} refuses (1,000,000)
     * @param maxWait    how long the oldest waiting entry may wait before the outbox's health is DOWN; shorter
     *                   than {@code orderless.compaction.grace} (an action that waits past the grace may
     *                   arrive beyond the horizon). Default: half the grace where it is set, else unchecked
     * @param relay      the relay run in this application
     */
    public record Outbox(@DefaultValue("false") boolean enabled, @DefaultValue("orderless_outbox") String collection,
                         Long maxBacklog, Duration maxWait, @DefaultValue Relay relay) {
        /**
         * @param enabled       run a relay here (true; it needs the publisher, {@code orderless.publisher.*})
         * @param batch         entries per claim and publish (500)
         * @param claimTtl      how long a claim keeps other relays off its entries (1m)
         * @param sweepInterval how often due entries are looked for without a change event (5s)
         * @param backoff       the pauses while the broker or MongoDB is down (from 100ms doubling to 10s)
         */
        public record Relay(@DefaultValue("true") boolean enabled, Integer batch, Duration claimTtl,
                            Duration sweepInterval, @DefaultValue BackoffProperties backoff) {
        }
    }

    /**
     * {@code orderless.publisher.*}: a {@code StampingPublisher} bean, where orderless-producer-stamping is on
     * the class path. It sends through a {@code RabbitTemplate} made with Spring Boot's
     * {@code spring.rabbitmq.template.*} settings, on a connection factory with
     * {@code spring.rabbitmq.publisher-confirm-type=correlated} and {@code spring.rabbitmq.publisher-returns=true}.
     *
     * @param enabled        false: no publisher (an application that only consumes)
     * @param exchange       default: {@code spring.rabbitmq.template.exchange}, else the default exchange
     * @param routingKey     default: {@code spring.rabbitmq.template.routing-key}, else {@code orderless.consumer.queue}
     * @param counters       the collection of the seq counters, in {@code orderless.database}
     * @param confirmTimeout how long one window of messages waits for the broker's confirms
     * @param maxAttempts    sends per message before the publish fails
     * @param backoff        the pauses before re-sending what was not confirmed (from 200ms doubling to 2s)
     * @param window         messages sent before waiting for their confirms
     */
    public record Publisher(@DefaultValue("true") boolean enabled, String exchange, String routingKey,
                            @DefaultValue("orderless_seq_counters") String counters, Duration confirmTimeout,
                            Integer maxAttempts, @DefaultValue BackoffProperties backoff, Integer window) {
    }

    /**
     * {@code orderless.compaction.*}: one pass per interval across every instance (a lease in
     * {@code orderless.leases}).
     *
     * @param enabled  off by default: tombstones are kept until compaction is turned on
     * @param interval the least time between two passes
     * @param grace    tombstones younger than this are kept; longer than any message can take to arrive,
     *                 retries and dead-letter replays included
     */
    public record Compaction(@DefaultValue("false") boolean enabled, @DefaultValue("1h") Duration interval,
                             Duration grace) {
        public Compaction {
            if ((enabled || grace != null) && (grace == null || grace.isNegative() || grace.isZero())) {
                throw new InvalidConfigurationException("orderless.compaction.grace must be a positive duration, "
                        + (grace == null ? "and is not set (compaction is enabled)" : "was " + grace) + ": how long a tombstone is kept, longer than any message can take to arrive (retries"
                        + " and dead-letter replays included)");
            }
            if (interval == null || interval.isNegative() || interval.isZero()) {
                throw new InvalidConfigurationException("orderless.compaction.interval must be a positive duration, was "
                        + interval);
            }
        }
    }

    public OrderlessProperties {
        view = view == null ? Map.of() : Map.copyOf(view);
    }

    /**
     * {@code orderless.database}, which every part needs (the entities, the counters, the outbox, the leases);
     * a start without it fails here, naming it.
     */
    public String requiredDatabase() {
        if (database == null || database.isBlank()) {
            throw new InvalidConfigurationException("orderless.database is " + (database == null ? "not set" : "empty")
                    + ": name the MongoDB database of the entities, seq counters, outbox and leases, e.g."
                    + " orderless.database=school");
        }
        return database;
    }

    /** {@code orderless.collection}, the entity collection; a start without it fails here, naming it. */
    public String requiredCollection() {
        if (collection == null || collection.isBlank()) {
            throw new InvalidConfigurationException("orderless.collection is " + (collection == null ? "not set"
                    : "empty") + ": name the entity collection the consumers write, e.g. orderless.collection=students");
        }
        return collection;
    }

    /** How the work queue is declared. */
    public enum QueueType { AUTO, QUORUM, CLASSIC }

    /**
     * How the consumer talks to the broker: AMQP 0-9-1 ({@code amqp-0-9-1}, the default, any RabbitMQ), or AMQP 1.0
     * ({@code amqp-1.0}: RabbitMQ 4 and {@code orderless-rabbit-amqp10}; the broker dead-letters poison itself).
     */
    public enum Protocol { AMQP_0_9_1, AMQP_1_0 }

    /**
     * {@code <prefix>.backoff.*}: the pauses between retries ({@link dev.orderless.Backoff}), the same three
     * properties wherever something retries; anything unset keeps the default of what retries.
     *
     * @param initial the first pause
     * @param max     the longest pause: each pause doubles up to it
     * @param jitter  the share of each pause that is random, from 0 (none) to 1; 0.5: between half the
     *                pause and all of it, so that instances that failed together do not retry together
     */
    public record BackoffProperties(Duration initial, Duration max, Double jitter) {
        /**
         * These properties over {@code defaults}: what is unset keeps the default's value, except that an initial
         * pause set above the default max raises the max with it ({@link dev.orderless.Backoff#withInitial}), so a
         * refusal only ever names a property the user set.
         */
        public dev.orderless.Backoff over(dev.orderless.Backoff defaults) {
            dev.orderless.Backoff backoff = initial != null ? defaults.withInitial(initial) : defaults;
            backoff = max != null ? backoff.withMax(max) : backoff;
            return jitter != null ? backoff.withJitter(jitter) : backoff;
        }
    }

    /**
     * {@code orderless.consumer.envelope.*}.
     *
     * @param unknownMembers a message member the envelope does not define: {@code ignore} (default: counted in
     *                       {@code orderless.envelope.ignored_members} and logged once per name, so producers may
     *                       add members first) or {@code refuse} (dead-lettered as {@code unsupported_envelope})
     */
    public record EnvelopeProperties(
            @DefaultValue("ignore") dev.orderless.message.Envelope.UnknownMembers unknownMembers) {
        /** The envelope a consumer reads its messages with, counting what it ignores in {@code meters}. */
        public dev.orderless.message.Envelope envelope(io.micrometer.core.instrument.MeterRegistry meters) {
            return new dev.orderless.message.Envelope().withUnknownMembers(unknownMembers).withMeters(meters);
        }
    }

    /**
     * {@code orderless.view.<name>.*}; anything unset keeps {@link FeederOptions#ofDefaults(String)}'s value.
     *
     * @param commitEvery    commit the position after this many events ...
     * @param commitInterval ... or this long
     * @param pollWait       how long one poll of the change stream waits
     * @param leaseTtl       a dead feeder is replaced about this long after it stopped renewing (renewed
     *                       every third of it)
     * @param poison         DEAD_LETTER or FAIL, for an event that fails every attempt
     * @param poisonAttempts attempts before {@code poison} decides
     * @param writes         BULK or ONE_AT_A_TIME
     * @param segments       split the source into this many segments, each with its own lease (1)
     * @param workers        feed at most this many segments in this application (all of them)
     */
    public record View(Integer commitEvery, Duration commitInterval, Duration pollWait, Duration leaseTtl,
                       FeederOptions.PoisonPolicy poison, Integer poisonAttempts, FeederOptions.Writes writes,
                       Integer segments, Integer workers) {

        FeederOptions options(String name) {
            FeederOptions options = FeederOptions.ofDefaults("view:" + name);
            try {
                if (commitEvery != null || commitInterval != null) {
                    options = options.withCommit(commitEvery != null ? commitEvery : options.commitEvery(),
                            commitInterval != null ? commitInterval : options.commitInterval());
                }
                if (leaseTtl != null) {
                    options = options.withLease(lease(leaseTtl));
                }
                if (pollWait != null) {
                    options = options.withPolling(pollWait, options.standbyPoll());
                }
                if (poison != null || poisonAttempts != null) {
                    options = options.withPoison(poison != null ? poison : options.poison(),
                            poisonAttempts != null ? poisonAttempts : options.poisonAttempts());
                }
                if (segments != null || workers != null) {
                    int count = segments != null ? segments : 1;
                    options = options.withSegments(count, workers != null ? workers : count);
                }
                return writes != null ? options.withWrites(writes) : options;
            } catch (InvalidConfigurationException e) {
                throw OptionProperties.named("orderless.view." + name, e);
            }
        }

        /** The lease's ttl is set as {@code lease-ttl} (renewed every third of it): its refusal names that. */
        private static LeaseOptions lease(Duration ttl) {
            try {
                return LeaseOptions.ofDefaults().withTtl(ttl, ttl.dividedBy(3));
            } catch (InvalidConfigurationException e) {
                throw InvalidConfigurationException.refused("leaseTtl", e.problem());
            }
        }
    }

    /**
     * {@code orderless.consumer.dead-letter-ttl}, refused if longer than the compaction grace: a letter
     * replayed after the grace could only end {@code beyond_horizon}.
     */
    Optional<Duration> deadLetterTtl() {
        Optional<Duration> ttl = Optional.ofNullable(consumer.deadLetterTtl());
        if (ttl.isPresent() && (ttl.get().isNegative() || ttl.get().isZero())) {
            throw new InvalidConfigurationException("orderless.consumer.dead-letter-ttl must be a positive duration,"
                    + " was " + ttl.get());
        }
        if (ttl.isPresent() && ttl.get().toMillis() > 0xFFFF_FFFFL) {
            throw new InvalidConfigurationException("orderless.consumer.dead-letter-ttl must be at most 4294967295 ms"
                    + " (RabbitMQ's limit, about 49 days), was " + ttl.get());
        }
        if (ttl.isPresent() && replayGrace().isPresent() && ttl.get().compareTo(compaction.grace()) > 0) {
            throw new InvalidConfigurationException("orderless.consumer.dead-letter-ttl (" + ttl.get() + ") is longer"
                    + " than orderless.compaction.grace (" + compaction.grace() + "): a letter replayed after the grace"
                    + " could only end beyond_horizon; set the TTL to at most the grace");
        }
        return ttl;
    }

    /**
     * {@code orderless.outbox.max-wait}, or half the compaction grace where that is set; refused if it is not
     * shorter than the grace. Empty when neither is set: the grace is not known here.
     */
    public Optional<Duration> outboxMaxWait() {
        Optional<Duration> maxWait = Optional.ofNullable(outbox.maxWait());
        if (maxWait.isPresent() && (maxWait.get().isNegative() || maxWait.get().isZero())) {
            throw new InvalidConfigurationException("orderless.outbox.max-wait must be a positive duration, was "
                    + maxWait.get());
        }
        if (maxWait.isPresent() && replayGrace().isPresent() && maxWait.get().compareTo(compaction.grace()) >= 0) {
            throw new InvalidConfigurationException("orderless.outbox.max-wait (" + maxWait.get() + ") is not shorter"
                    + " than orderless.compaction.grace (" + compaction.grace() + "): an action that waits that long in"
                    + " the outbox may arrive beyond the horizon; set max-wait well below the grace (half leaves room"
                    + " for retries and dead-letter replays)");
        }
        return maxWait.or(() -> replayGrace().map(grace -> grace.dividedBy(2)));
    }

    /**
     * How old a dead letter may be and still be replayed: {@code orderless.compaction.grace}, whenever it is
     * set (compaction may run in another application on the same collection).
     *
     * @return the grace, or empty when none is set (then no letter is too old to replay)
     */
    public Optional<Duration> replayGrace() {
        return Optional.ofNullable(compaction.grace());
    }

    /** {@code orderless.view.<name>.*} of {@code name}, defaults if none is set. */
    FeederOptions viewOptions(String name) {
        return view.getOrDefault(name, new View(null, null, null, null, null, null, null, null, null)).options(name);
    }

    /**
     * {@code orderless.consumer.*}.
     *
     * @param enabled             false: no consumer even with a queue (a publishing-only application)
     * @param queue               the work queue; declared with its dead-letter queue at start-up
     * @param queueType           auto (quorum on RabbitMQ, classic elsewhere, asked when the consumer starts),
     *                            quorum or classic (also declared by Boot's {@code RabbitAdmin} on every
     *                            connection)
     * @param protocol            amqp-0-9-1 (default) or amqp-1.0 (RabbitMQ 4, with orderless-rabbit-amqp10 on the
     *                            class path: the broker dead-letters poison itself, once whenever a consumer dies)
     * @param deadLetterQueue     default: the queue's name + {@code .dlq}
     * @param concurrency         competing consumers (threads)
     * @param prefetch            unacked messages per consumer
     * @param batchSize           messages applied together; 1 for one at a time
     * @param batchReceiveTimeout how long a batch is gathered
     * @param backoff             the pauses between retries after a transient MongoDB failure
     * @param maxHold             how long one message may fail while MongoDB serves others
     * @param shutdownTimeout     how long stopping lets in-flight messages finish
     * @param deadLetterTtl       on RabbitMQ, letters older than this move by themselves from the dead-letter
     *                            queue to its parking queue ({@code <dead-letter-queue>.parked}); at most
     *                            {@code orderless.compaction.grace}. Unset: letters stay until replayed,
     *                            parked or purged
     * @param envelope            how messages in the canonical envelope are read ({@code orderless.consumer.envelope.*})
     */
    public record Consumer(@DefaultValue("true") boolean enabled, String queue, String deadLetterQueue,
                           @DefaultValue("auto") QueueType queueType, @DefaultValue("amqp-0-9-1") Protocol protocol,
                           Integer concurrency, Integer prefetch,
                           Integer batchSize, Duration batchReceiveTimeout, @DefaultValue BackoffProperties backoff,
                           Duration maxHold, Duration shutdownTimeout, Duration deadLetterTtl,
                           @DefaultValue EnvelopeProperties envelope) {

        /** The envelope the consumer reads its messages with, counting what it ignores in {@code meters}. */
        dev.orderless.message.Envelope envelope(io.micrometer.core.instrument.MeterRegistry meters) {
            return envelope.envelope(meters);
        }

        /**
         * The consumer's options: these properties, else {@code spring.rabbitmq.listener.simple.*}'s
         * ({@code springConcurrency}, {@code springPrefetch}, {@code springBatchSize}), else the defaults.
         * Without a batch size of its own the batch is at most the prefetch. A value out of range fails
         * here, naming the property.
         */
        ConsumerOptions options(Optional<Integer> springConcurrency, Optional<Integer> springPrefetch,
                                Optional<Integer> springBatchSize) {
            if (queue == null || queue.isBlank()) {
                throw new InvalidConfigurationException("orderless.consumer.queue is not set: name the work queue,"
                        + " or set orderless.consumer.enabled=false");
            }
            Optional<Integer> fetch = first(prefetch, springPrefetch);
            return OptionProperties.under("orderless.consumer", () -> {
                ConsumerOptions options = ConsumerOptions.ofDefaults(queue);
                if (deadLetterQueue != null) {
                    options = options.withDeadLetterQueue(deadLetterQueue);
                }
                options = options.withConcurrency(first(concurrency, springConcurrency).orElse(options.concurrency()));
                int batch = first(batchSize, springBatchSize)
                        .orElse(Math.min(options.batchSize(), fetch.orElse(options.batchSize())));
                options = batch == 1 ? options.perMessage() : options.withBatch(batch,
                        Optional.ofNullable(batchReceiveTimeout).orElse(options.batchReceiveTimeout()));
                if (fetch.isPresent()) {
                    options = options.withPrefetch(fetch.get());
                }
                options = options.withBackoff(backoff.over(options.backoff()));
                if (maxHold != null) {
                    options = options.withMaxHold(maxHold);
                }
                if (shutdownTimeout != null) {
                    options = options.withShutdownTimeout(shutdownTimeout);
                }
                return options;
            });
        }

        private static Optional<Integer> first(Integer own, Optional<Integer> spring) {
            return own != null ? Optional.of(own) : spring;
        }
    }
}
