package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.broker.QueueTopology;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/** Looking at dead letters by kind, and sending them back to the work queue. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class DeadLetterQueueTest {

    @Test
    void letters_that_failed_for_one_reason_are_listed_as_one_group_naming_their_entities(ConnectionFactory cf,
                                                                                          MongoDatabase db) throws Exception {
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "groups")) {
            OperationConsumer consumer = fixture.start(fixture.options(1).withMaxMessageBytes(200));
            List<byte[]> bodies = new ArrayList<>();
            for (String entity : List.of("p1", "p2", "p3", "p4")) {
                bodies.add(("{\"entity\":\"" + entity + "\",\"op\":\"delete\"}").getBytes(StandardCharsets.UTF_8));
            }
            bodies.add("{\"entity\":\"p5\",\"seq\":7,\"op\":\"upsert\"}".getBytes(StandardCharsets.UTF_8));
            bodies.add(("{\"entity\":\"p6\",\"seq\":8,\"pad\":\"" + "x".repeat(300) + "\"}").getBytes(StandardCharsets.UTF_8));
            fixture.publishRaw(bodies);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 6);
            consumer.close();

            List<DeadLetterQueue.Group> groups = DeadLetterQueue.of(cf, fixture.queue, fixture.deadLetterQueue).list(100);

            assertThat(groups).hasSize(3);
            assertThat(groups.get(0)).satisfies(missingSeq -> {
                assertThat(missingSeq.kind()).isEqualTo("bad_input");
                assertThat(missingSeq.count()).isEqualTo(4);
                assertThat(missingSeq.reason()).as("the group names its entities; its reason names none")
                        .isEqualTo("missing 'seq'");
                assertThat(missingSeq.entities()).as("three of the four").hasSize(3).allMatch(e -> e.matches("p[1-4]"));
            });
            assertThat(groups.subList(1, 3)).as("the kind with most letters first, then in each the most frequent")
                    .extracting(DeadLetterQueue.Group::kind, DeadLetterQueue.Group::entities)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("bad_input", List.of("p5")),
                            org.assertj.core.groups.Tuple.tuple("oversized", List.of("p6")));
        }
    }

    @Test
    void a_peek_shows_each_letters_reason_entity_seq_and_body_and_leaves_every_letter_in_place(ConnectionFactory cf,
                                                                                              MongoDatabase db)
            throws Exception {
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "dlq-peek")) {
            OperationConsumer consumer = fixture.start(fixture.options(1));
            fixture.publishRaw(List.of("not json".getBytes(StandardCharsets.UTF_8),
                    "{\"entity\":\"p7\",\"seq\":3,\"op\":\"upsert\"}".getBytes(StandardCharsets.UTF_8)));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 2);
            consumer.close();
            DeadLetterQueue letters = DeadLetterQueue.of(cf, fixture.queue, fixture.deadLetterQueue);

            List<DeadLetterQueue.Letter> peeked = letters.peek(java.util.Optional.empty(), 10);

            assertThat(peeked).extracting(DeadLetterQueue.Letter::body)
                    .containsExactlyInAnyOrder("not json", "{\"entity\":\"p7\",\"seq\":3,\"op\":\"upsert\"}");
            assertThat(peeked).filteredOn(l -> l.entity().isPresent()).singleElement().satisfies(letter -> {
                assertThat(letter.kind()).isEqualTo("bad_input");
                assertThat(letter.entity()).contains("p7");
                assertThat(letter.seq()).hasValue(3);
                assertThat(letter.reason()).contains("upsert");
                assertThat(letter.deadLettered()).isPresent();
                assertThat(letter.replays()).isZero();
            });
            assertThat(letters.peek(java.util.Optional.of("oversized"), 10)).as("none of that kind").isEmpty();
            assertThat(fixture.messagesIn(fixture.deadLetterQueue)).as("every letter handed back").isEqualTo(2);
            assertThat(letters.depth()).isEqualTo(2);
        }
    }

    @Test
    void letters_are_listed_by_kind_replayed_by_kind_and_refused_past_the_grace(ConnectionFactory cf, MongoDatabase db)
            throws Exception {
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "dlq")) {
            OperationConsumer consumer = fixture.start(fixture.options(1).withMaxMessageBytes(200));
            List<byte[]> bodies = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                bodies.add(("not json " + i).getBytes(StandardCharsets.UTF_8));
            }
            for (int i = 0; i < 2; i++) {
                bodies.add(("{\"entity\":\"e" + i + "\",\"pad\":\"" + "x".repeat(300) + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            fixture.publishRaw(bodies);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 5);
            consumer.close();
            DeadLetterQueue letters = DeadLetterQueue.of(cf, fixture.queue, fixture.deadLetterQueue);

            assertThat(DeadLetterQueue.byKind(letters.list(100))).containsExactly(Map.entry("bad_input", 3L),
                    Map.entry("oversized", 2L));
            Awaitility.await("listing hands every letter back").atMost(Duration.ofSeconds(10))
                    .until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 5);

            DeadLetterQueue.Replay oversized = letters.replay(Optional.of("oversized"), 10, Duration.ofDays(1),
                    Clock.systemUTC());
            assertThat(oversized.replayed()).isEqualTo(2);
            List<Message> back = new ArrayList<>();
            RabbitTemplate template = new RabbitTemplate(cf);
            for (Message m = template.receive(fixture.queue, 2000); m != null; m = template.receive(fixture.queue, 500)) {
                back.add(m);
            }
            assertThat(back).hasSize(2).allSatisfy(m -> assertThat(m.getMessageProperties().getHeaders())
                    .containsEntry("x-orderless-replay-count", 1)
                    // the old reason goes: a replayed message that fails again is dead-lettered for its new reason
                    .doesNotContainKeys("x-orderless-reason-kind", "x-orderless-reason"));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 3);

            Clock later = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(2));
            DeadLetterQueue.Replay tooOld = letters.replay(Optional.empty(), 10, Duration.ofMinutes(1), later);
            assertThat(tooOld).isEqualTo(new DeadLetterQueue.Replay(0, Map.of("bad_input", 3L)));
            Awaitility.await("refused letters stay").atMost(Duration.ofSeconds(10))
                    .until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 3);
        }
    }

    /**
     * Rolling out a new register: the producer sends it before the consumers know it. Its messages are
     * dead-lettered as unknown_field; once the consumers are upgraded, a replay of that kind applies them.
     */
    @Test
    void operations_on_a_field_the_consumers_do_not_know_yet_are_replayed_once_they_do(ConnectionFactory cf,
                                                                                      MongoDatabase db) throws Exception {
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "dlq-rollout")) {
            dev.orderless.apply.CollectionSchema before = dev.orderless.apply.CollectionSchema.builder()
                    .register("name").build();
            dev.orderless.apply.CollectionSchema after = dev.orderless.apply.CollectionSchema.builder()
                    .register("name").register("carrier").build();
            var entities = db.getCollection("rollout", org.bson.BsonDocument.class);
            OperationConsumer old = fixture.start(dev.orderless.apply.GuardedApplier.create(entities, before),
                    fixture.options(1));
            fixture.publish(List.of(
                    dev.orderless.apply.Operation.assign("s1", 1, "name", new org.bson.BsonString("Ada")),
                    dev.orderless.apply.Operation.assign("s1", 2, "carrier", new org.bson.BsonString("DHL")),
                    dev.orderless.apply.Operation.assign("s2", 1, "carrier", new org.bson.BsonString("UPS"))));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 2);
            old.close();
            DeadLetterQueue letters = DeadLetterQueue.of(cf, fixture.queue, fixture.deadLetterQueue);
            assertThat(letters.list(10)).singleElement().satisfies(group -> {
                assertThat(group.kind()).isEqualTo("unknown_field");
                assertThat(group.reason()).contains("field 'carrier' is not a declared register");
            });

            fixture.start(dev.orderless.apply.GuardedApplier.create(entities, after), fixture.options(1));
            assertThat(letters.replay(Optional.of("unknown_field"), 10, Duration.ofDays(1), Clock.systemUTC())
                    .replayed()).isEqualTo(2);

            Awaitility.await("applied by the upgraded consumers").atMost(Duration.ofSeconds(30)).until(() ->
                    entities.countDocuments(com.mongodb.client.model.Filters.exists("carrier")) == 2);
            assertThat(fixture.messagesIn(fixture.deadLetterQueue)).isZero();
            assertThat(entities.find(com.mongodb.client.model.Filters.eq("_id", "s1")).first())
                    .containsEntry("name", new org.bson.BsonString("Ada"))
                    .containsEntry("carrier", new org.bson.BsonString("DHL"));
        }
    }

    @Test
    void letters_are_parked_and_purged_by_kind(ConnectionFactory cf, MongoDatabase db) throws Exception {
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "dlq-park")) {
            OperationConsumer consumer = fixture.start(fixture.options(1).withMaxMessageBytes(200));
            List<byte[]> bodies = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                bodies.add(("not json " + i).getBytes(StandardCharsets.UTF_8));
            }
            for (int i = 0; i < 2; i++) {
                bodies.add(("{\"entity\":\"e" + i + "\",\"pad\":\"" + "x".repeat(300) + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
            }
            fixture.publishRaw(bodies);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 5);
            consumer.close();
            DeadLetterQueue letters = DeadLetterQueue.of(cf, fixture.queue, fixture.deadLetterQueue);
            String parking = QueueTopology.parkingQueue(fixture.deadLetterQueue);

            assertThat(letters.park(Optional.of("oversized"), 10)).isEqualTo(2);
            assertThat(letters.purge(Optional.of("bad_input"), 2)).isEqualTo(2);

            Awaitility.await("one bad_input letter left").atMost(Duration.ofSeconds(10))
                    .until(() -> fixture.messagesIn(fixture.deadLetterQueue) == 1 && fixture.messagesIn(parking) == 2);
            assertThat(DeadLetterQueue.byKind(letters.list(10))).containsOnlyKeys("bad_input");
            assertThat(DeadLetterQueue.byKind(DeadLetterQueue.of(cf, fixture.queue, parking).list(10)))
                    .containsExactly(Map.entry("oversized", 2L));
            new org.springframework.amqp.rabbit.core.RabbitAdmin(cf).deleteQueue(parking);
        }
    }

    @Test
    void on_rabbitmq_a_letter_older_than_the_dead_letter_ttl_moves_to_the_parking_queue(ConnectionFactory cf) {
        org.junit.jupiter.api.Assumptions.assumeTrue(QueueTopology.isRabbitMq(cf), "TTL parking is declared on RabbitMQ only");
        String queue = RabbitExtension.uniqueQueue("dlq-ttl");
        String dlq = queue + ".dlq";
        QueueTopology.declare(cf, queue, dlq, QueueTopology.QueueType.QUORUM, Optional.of(Duration.ofMillis(300)));
        try {
            new RabbitTemplate(cf).send("", dlq, new Message("a letter".getBytes(StandardCharsets.UTF_8)));

            Awaitility.await("the letter is parked once older than the TTL").atMost(Duration.ofSeconds(30))
                    .until(() -> new RabbitTemplate(cf).receive(QueueTopology.parkingQueue(dlq), 100) != null);
        } finally {
            org.springframework.amqp.rabbit.core.RabbitAdmin admin = new org.springframework.amqp.rabbit.core.RabbitAdmin(cf);
            admin.deleteQueue(queue);
            admin.deleteQueue(dlq);
            admin.deleteQueue(QueueTopology.parkingQueue(dlq));
        }
    }

    @Test
    void without_compaction_a_replay_needs_no_grace_and_sends_back_letters_of_any_age_or_none_known(ConnectionFactory cf) {
        String queue = RabbitExtension.uniqueQueue("nocompaction");
        QueueTopology.declare(cf, queue, queue + ".dlq");
        RabbitTemplate template = new RabbitTemplate(cf);
        template.send("", queue + ".dlq", org.springframework.amqp.core.MessageBuilder.withBody(bytes("ten years old"))
                .setHeader("x-orderless-reason-kind", "no_progress")
                .setHeader("x-orderless-dead-lettered-at", "2016-01-01T00:00:00Z").build());
        template.send("", queue + ".dlq", org.springframework.amqp.core.MessageBuilder.withBody(bytes("no time at all"))
                .build());
        DeadLetterQueue letters = DeadLetterQueue.of(cf, queue, queue + ".dlq");

        assertThat(letters.replay(Optional.empty(), 10, Duration.ofDays(30), Clock.systemUTC()).refused())
                .as("with a compaction grace both are refused").isEqualTo(Map.of("no_progress", 1L, "unknown", 1L));
        DeadLetterQueue.Replay replay = letters.replay(Optional.empty(), 10);

        assertThat(replay).isEqualTo(new DeadLetterQueue.Replay(2, Map.of()));
        List<String> back = new ArrayList<>();
        for (Message m = template.receive(queue, 2000); m != null; m = template.receive(queue, 500)) {
            back.add(new String(m.getBody(), StandardCharsets.UTF_8));
        }
        assertThat(back).containsExactlyInAnyOrder("ten years old", "no time at all");
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void a_replay_to_a_work_queue_that_does_not_exist_is_refused_before_any_letter_moves(ConnectionFactory cf) {
        String missing = RabbitExtension.uniqueQueue("missing");
        DeadLetterQueue letters = DeadLetterQueue.of(cf, missing, missing + ".dlq");

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> letters.replay(Optional.empty(), 10,
                        Duration.ofDays(1), Clock.systemUTC()))
                .isInstanceOf(dev.orderless.InvalidConfigurationException.class)
                .hasMessageContaining("the work queue '" + missing + "' does not exist");
    }
}
