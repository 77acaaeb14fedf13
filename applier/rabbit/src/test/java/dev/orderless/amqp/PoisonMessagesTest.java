package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.Operation;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** Every kind of bad input, published among good messages, lands in the DLQ with its reason. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class PoisonMessagesTest {
    private static final int MAX_BYTES = 4096;

    /** Body to the reason its dead letter must carry. */
    private static Map<String, String> poison() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("this is not json", "not JSON");
        p.put("[1, 2, 3]", "not a JSON object");
        p.put("{\"entity\":\"p1\",\"op\":\"delete\"}", "missing 'seq'");
        p.put("{\"entity\":\"p1\",\"seq\":0,\"op\":\"delete\"}", "'seq' must be positive, was 0");
        p.put("{\"entity\":\"p1\",\"seq\":-5,\"op\":\"delete\"}", "'seq' must be positive, was -5");
        p.put("{\"entity\":\"p1\",\"seq\":1.5,\"op\":\"delete\"}", "'seq' must be a whole number");
        p.put("{\"entity\":\"p1\",\"seq\":\"7\",\"op\":\"delete\"}", "'seq' must be a whole number");
        p.put("{\"seq\":7,\"op\":\"delete\"}", "missing 'entity'");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"upsert\"}", "unknown op 'upsert'");
        p.put("{\"entity\":\"p1\",\"sequence\":7,\"op\":\"delete\"}",
                "missing 'seq' (it has 'sequence', which envelope 3 does not define) (entity 'p1')");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"delete\",\"v\":4}", "envelope version 4 is not one this consumer reads");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"add\",\"field\":\"hobbies\",\"element\":\"x\"}",
                "field 'hobbies' is not a declared set field");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"assign\",\"field\":\"$set\",\"value\":1}", "'$set' starts with '$'");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"assign\",\"field\":\"name.first\",\"value\":1}",
                "'name.first' contains '.'");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"assign\",\"field\":\"_v\",\"value\":1}", "'_v' is reserved");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"assign\",\"field\":\"_id\",\"value\":1}", "'_id' is reserved");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"add\",\"field\":\"classes\",\"element\":\"x\",\"attrs\":[1]}",
                "'attrs' must be an object");
        p.put("{\"entity\":\"p1\",\"seq\":7,\"op\":\"assign\",\"field\":\"name\"}", "assign without 'value'");
        p.put("{\"entity\":\"p1\",\"seq\":8,\"op\":\"assign\",\"field\":\"name\",\"value\":\"" + "x".repeat(MAX_BYTES) + "\"}",
                "bytes, limit " + MAX_BYTES + " (entity 'p1', seq 8)");
        return p;
    }

    @Test
    void each_kind_of_bad_input_is_dead_lettered_with_its_reason_and_the_good_messages_converge(ConnectionFactory cf,
                                                                                               MongoDatabase db)
            throws Exception {
        run(cf, db, 1);
    }

    @Test
    void in_batches_each_bad_message_is_dead_lettered_alone_and_the_rest_of_its_batch_converges(ConnectionFactory cf,
                                                                                                MongoDatabase db)
            throws Exception {
        run(cf, db, 20);
    }

    private static void run(ConnectionFactory cf, MongoDatabase db, int batch) throws Exception {
        long seed = Long.getLong("orderless.seed", System.nanoTime());
        Random random = new Random(seed);
        List<Operation> history = Histories.operations(Histories.steps(random, 400, 400, 20), "g");
        Map<String, String> poison = poison();
        List<byte[]> bodies = new ArrayList<>();
        var envelope = new dev.orderless.message.Envelope();
        Histories.delivery(history, 0.2, random).forEach(op -> bodies.add(envelope.encode(op)));
        poison.keySet().forEach(p -> bodies.add(p.getBytes(StandardCharsets.UTF_8)));
        Collections.shuffle(bodies, random);

        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "poison")) {
            ConsumerOptions options = fixture.options(4).withMaxMessageBytes(MAX_BYTES);
            fixture.start(batch > 1 ? options.withBatch(batch, Duration.ofMillis(20)) : options.perMessage());
            fixture.publishRaw(bodies);
            fixture.awaitHandled(bodies.size(), Duration.ofMinutes(2));

            Map<String, String> deadLetters = fixture.drainDeadLetters();
            System.out.printf("[poison] seed %d" + (batch > 1 ? ", batches of " + batch : "") + ": %d good messages, %d poison: dead-lettered %.0f%n", seed,
                    bodies.size() - poison.size(), poison.size(), fixture.deadLettered());
            deadLetters.forEach((body, reason) -> System.out.printf("[poison]   %-60s -> %s%n",
                    body.length() > 60 ? body.substring(0, 57) + "..." : body, reason));
            assertThat(deadLetters.keySet()).containsExactlyInAnyOrderElementsOf(poison.keySet());
            poison.forEach((body, reason) -> assertThat(deadLetters.get(body)).as(body).contains(reason));
            assertThat(deadLetters.values()).allSatisfy(reason -> assertThat(reason.length()).isLessThanOrEqualTo(200));
            assertThat(fixture.deadLettered()).isEqualTo(poison.size());
            assertThat(fixture.acked()).isEqualTo(bodies.size() - poison.size());
            fixture.awaitEmpty(fixture.queue);
            assertThat(db.getCollection("entities").countDocuments(com.mongodb.client.model.Filters.eq("_id", "p1")))
                    .as("no poison reached MongoDB").isZero();
            fixture.assertConverged(history);
        }
    }
}
