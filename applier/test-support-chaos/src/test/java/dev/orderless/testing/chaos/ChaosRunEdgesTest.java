package dev.orderless.testing.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.orderless.InvalidInputException;
import dev.orderless.apply.CollectionSchema;
import dev.orderless.apply.GuardedApplier;
import dev.orderless.apply.Operation;
import dev.orderless.apply.SetField;
import dev.orderless.backends.MongoBackend;
import dev.orderless.backends.rabbit.RabbitBackend;
import dev.orderless.message.Envelope;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.TcpProxy;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * What a chaos run must not get wrong about a team's consumer (from an adversarial review): a slow consumer is not
 * a lossy one, a dropped kind of message is shrunk to itself, bad input is named, and nothing of a failed run keeps
 * running.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ChaosRunEdgesTest {
    private static final CollectionSchema SCHEMA = CollectionSchema.builder().set(SetField.of("lines", "sku"))
            .register("coupon").counter("items").build();

    /** A consumer of a team's own that skips what {@code skip} says and takes {@code millis} per message. */
    private static ConsumerFactory own(Predicate<Operation> skip, long millis) {
        return listener(applier -> op -> {
            LockSupport.parkNanos(millis * 1_000_000);   // the consumer's own pace, not a wait for anything
            if (!skip.test(op)) {
                applier.apply(op);
            }
        });
    }

    @Test
    void a_slow_consumer_that_loses_nothing_converges_though_the_queue_looks_empty_early(MongoBackend mongo,
                                                                                       RabbitBackend rabbit) {
        List<Operation> history = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            history.add(Operation.increment("o-" + (i % 20), i / 20 + 1, "items", 1));
        }

        ChaosResult result = ChaosRun.of(SCHEMA).withHistory(history).withConsumers(1, own(op -> false, 20))
                .withThreads(1).withoutShrinking().withSeed(7).run(mongo.connectionString(), rabbit.uri());

        result.print(System.out);
        assertThat(result.converged()).as("lost %d", result.lost()).isTrue();
    }

    @Test
    void a_consumer_that_drops_one_kind_of_message_is_shrunk_to_that_message(MongoBackend mongo,
                                                                            RabbitBackend rabbit) {
        ChaosResult result = ChaosRun.of(SCHEMA)
                .withHistory(List.of(Operation.assign("o-1", 1, "coupon", new BsonString("A")),
                        Operation.increment("o-1", 2, "items", 1)))
                .withConsumers(1, own(op -> op instanceof Operation.Increment, 0)).withSeed(3)
                .run(mongo.connectionString(), rabbit.uri());

        result.print(System.out);
        assertThat(result.counterexample()).hasValueSatisfying(smallest -> assertThat(smallest.delivery())
                .containsExactly(Operation.increment("o-1", 2, "items", 1)));
    }

    @Test
    void a_consumer_that_counts_increments_twice_is_reported_diverged_not_lost(MongoBackend mongo, RabbitBackend rabbit) {
        List<Operation> history = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            history.add(Operation.increment("o-" + (i % 5), i / 5 + 1, "items", 1));
        }
        // every increment applied twice: once as sent, once more under a seq of its own (a redelivery counted again)
        ConsumerFactory doubleCounting = listener(applier -> op -> {
            applier.apply(op);
            if (op instanceof Operation.Increment increment) {
                applier.apply(Operation.increment(op.entity(), op.seq() + 1_000_000, increment.field(),
                        increment.delta()));
            }
        });

        ChaosResult result = ChaosRun.of(SCHEMA).withHistory(history).withConsumers(1, doubleCounting)
                .withoutShrinking().withSeed(5).run(mongo.connectionString(), rabbit.uri());

        result.print(System.out);
        assertThat(result.diverged()).as("every order's items counted twice").isEqualTo(5);
        assertThat(result.lost()).as("nothing is missing: each increment is there, once too often").isZero();
    }

    @Test
    void a_divergence_that_does_not_break_again_one_message_at_a_time_is_said_not_reproduced(MongoBackend mongo,
                                                                                             RabbitBackend rabbit) {
        // the consumer drops the first message it is ever given, and never again: the run breaks, no trial does
        AtomicBoolean droppedOne = new AtomicBoolean();
        ConsumerFactory breaksOnce = listener(applier -> op -> {
            if (droppedOne.compareAndSet(false, true)) {
                return;
            }
            applier.apply(op);
        });

        ChaosResult result = ChaosRun.of(SCHEMA).withHistory(List.of(Operation.assign("o-1", 1, "coupon",
                new BsonString("A")))).withConsumers(1, breaksOnce).withSeed(9).run(mongo.connectionString(), rabbit.uri());

        result.print(System.out);
        assertThat(result.diverged()).isEqualTo(1);
        assertThat(result.counterexample()).isEmpty();
        assertThat(result.notReproduced()).containsExactly("o-1");
    }

    @Test
    void a_broker_that_stops_during_the_publish_is_one_line_naming_it_and_the_cause(MongoBackend mongo,
                                                                                   RabbitBackend rabbit) {
        URI direct = rabbit.uri();
        try (TcpProxy broker = TcpProxy.start(direct.getHost(), direct.getPort() < 0 ? 5672 : direct.getPort())) {
            broker.dropWhenClientSends("o-stops-the-broker");   // the connection ends as that message is sent
            URI proxied = URI.create(direct.getScheme() + "://" + direct.getRawUserInfo() + "@127.0.0.1:"
                    + broker.port() + direct.getRawPath());
            List<Operation> history = new ArrayList<>();
            for (int i = 1; i <= 20; i++) {
                history.add(Operation.assign(i == 10 ? "o-stops-the-broker" : "o-" + i, 1, "coupon", new BsonString("A")));
            }
            ChaosRun run = ChaosRun.of(SCHEMA).withHistory(history).withSeed(2);

            assertThatThrownBy(() -> run.run(mongo.connectionString(), proxied))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("chaos run: publishing its messages: the broker at 127.0.0.1:" + broker.port())
                    .satisfies(e -> assertThat(e.getMessage()).as("one line").doesNotContain("\n"))
                    .satisfies(e -> assertThat(causes(e)).noneMatch(AssertionError.class::isInstance));
        }
    }

    /** A consumer of a team's own: a container whose listener hands each operation to {@code handler}. */
    private static ConsumerFactory listener(java.util.function.Function<GuardedApplier,
            java.util.function.Consumer<Operation>> handler) {
        return context -> {
            java.util.function.Consumer<Operation> handle = handler.apply(GuardedApplier.create(
                    context.database().getCollection(context.collection(), BsonDocument.class), SCHEMA));
            Envelope envelope = Envelope.ofDefaults();
            SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(context.connectionFactory());
            container.setQueueNames(context.queue());
            container.setConcurrentConsumers(context.concurrency());
            container.setShutdownTimeout(0);   // closed, it hands back what it holds at once
            container.setMessageListener(message -> handle.accept(envelope.decode(message.getBody())));
            container.start();
            return container::stop;
        };
    }

    private static List<Throwable> causes(Throwable e) {
        List<Throwable> causes = new ArrayList<>();
        for (Throwable at = e; at != null && !causes.contains(at); at = at.getCause()) {
            causes.add(at);
        }
        return causes;
    }

    @Test
    void a_seq_collision_in_the_operations_is_named_before_anything_is_published() {
        ChaosRun run = ChaosRun.of(SCHEMA).withHistory(List.of(
                Operation.assign("o-1", 1, "coupon", new BsonString("A")),
                Operation.assign("o-1", 1, "coupon", new BsonString("B"))));

        assertThatThrownBy(run::drawn).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("seq collision").hasMessageContaining("'o-1' seq 1");
    }

    @Test
    void a_codec_that_reads_a_value_back_with_another_type_is_named_before_anything_is_published() {
        Operation line = Operation.add("o-1", 1, "lines", "sku-1", new org.bson.BsonDocument("quantity",
                new org.bson.BsonInt64(2)));
        dev.orderless.message.Envelope envelope = new dev.orderless.message.Envelope();
        // a team's codec that writes its numbers as plain JSON: a 64-bit 2 reads back as a 32-bit one
        ChaosRun run = ChaosRun.of(SCHEMA).withHistory(List.of(line)).withCodec(envelope::encode,
                body -> {
                    Operation.Add add = (Operation.Add) envelope.decode(body);
                    return Operation.add(add.entity(), add.seq(), add.field(), add.element(),
                            new org.bson.BsonDocument("quantity", new org.bson.BsonInt32(2)));
                });

        assertThatThrownBy(run::drawn).isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("the codec does not carry 'o-1' seq 1 as it is");
    }

    @Test
    void the_canonical_envelope_carries_every_value_with_its_type() {
        Operation line = Operation.add("o-1", 1, "lines", "sku-1", new org.bson.BsonDocument("quantity",
                new org.bson.BsonInt64(2)).append("price", new org.bson.BsonDecimal128(
                org.bson.types.Decimal128.parse("19.99"))));

        assertThat(ChaosRun.of(SCHEMA).withHistory(List.of(line)).drawn().operations()).containsExactly(line);
    }

    @Test
    void a_consumer_factory_that_fails_leaves_none_of_the_consumers_it_started_running(MongoBackend mongo,
                                                                                      RabbitBackend rabbit) {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger closed = new AtomicInteger();
        ConsumerFactory standard = ConsumerFactory.standard(SCHEMA);
        ConsumerFactory failsSecond = context -> {
            if (started.incrementAndGet() == 2) {
                throw new IllegalStateException("the second consumer cannot start");
            }
            AutoCloseable consumer = standard.start(context);
            return () -> {
                closed.incrementAndGet();
                consumer.close();
            };
        };
        ChaosRun run = ChaosRun.of(SCHEMA).withHistory(List.of(Operation.assign("o-1", 1, "coupon",
                new BsonString("A")))).withConsumers(2, failsSecond).withSeed(1);

        assertThatThrownBy(() -> run.run(mongo.connectionString(), rabbit.uri()))
                .hasMessageContaining("the second consumer cannot start");
        assertThat(closed.get()).isEqualTo(1);
    }

    @Test
    void a_broker_that_cannot_be_reached_leaves_no_mongodb_client_behind(MongoBackend mongo) {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        ChaosRun run = ChaosRun.of(SCHEMA).withHistory(List.of(Operation.assign("o-1", 1, "coupon",
                new BsonString("A"))));

        assertThatThrownBy(() -> run.run(mongo.connectionString(), URI.create("amqp://guest:guest@127.0.0.1:1/")));

        // a closed client's monitor thread ends a moment after close() returns; one left open never ends
        org.awaitility.Awaitility.await("the MongoDB client's monitor threads end").atMost(java.time.Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> !before.contains(t)).filter(Thread::isAlive).map(Thread::getName)
                        .collect(Collectors.toSet())).noneMatch(name -> name.startsWith("cluster-")));
    }
}
