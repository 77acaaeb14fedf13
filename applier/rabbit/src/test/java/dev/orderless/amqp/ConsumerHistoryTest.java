package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import dev.orderless.apply.EntityState;
import dev.orderless.apply.Operation;
import dev.orderless.history.History;
import dev.orderless.history.HistoryOptions;
import dev.orderless.history.Recorded;
import dev.orderless.history.Version;
import dev.orderless.oracle.Histories;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/** A consumer with the history on records each operation once before it applies it. */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumerHistoryTest {

    @Test
    void every_operation_consumed_is_recorded_once_and_the_history_ends_where_the_live_documents_do(ConnectionFactory cf,
                                                                                                   MongoDatabase db)
            throws Exception {
        Random random = new Random(7);
        List<Operation> ops = Histories.operations(Histories.steps(random, 600, 600, 30), "h");
        List<Operation> delivered = Histories.delivery(ops, 0.2, random);
        MongoCollection<BsonDocument> records = db.getCollection("entities_history", BsonDocument.class);
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "history")) {
            History history = History.of(records, Histories.SCHEMA, HistoryOptions.ofDefaults().withMeters(fixture.meters));
            fixture.start(OperationConsumer.builder(cf, fixture.applier).options(fixture.options(2)).history(history));
            fixture.publish(delivered);
            List<byte[]> bad = List.of("{\"entity\":\"x\",\"seq\":1,\"op\":\"assign\",\"field\":\"undeclared\",\"value\":1}"
                    .getBytes(StandardCharsets.UTF_8));
            fixture.publishRaw(bad);
            fixture.awaitHandled(delivered.size() + 1, Duration.ofMinutes(2));

            assertThat(records.countDocuments()).as("one record per operation, the bad one not recorded")
                    .isEqualTo(ops.size());
            assertThat(fixture.count("orderless.history.recorded", "outcome", Recorded.DUPLICATE.tag()))
                    .as("every redelivery recorded as a duplicate").isEqualTo(delivered.size() - ops.size());
            assertThat(fixture.deadLettered()).isEqualTo(1);
            Map<String, List<Operation>> byEntity = new TreeMap<>();
            ops.forEach(op -> byEntity.computeIfAbsent(op.entity(), e -> new ArrayList<>()).add(op));
            Map<String, EntityState> live = EntityState.readAll(fixture.collection.find(), Histories.SCHEMA);
            byEntity.forEach((entity, theirs) -> {
                var versions = history.versions(entity);
                assertThat(versions.versions()).extracting(Version::op).containsExactlyElementsOf(theirs);
                assertThat(versions.current()).isEqualTo(live.get(entity));
            });
        }
    }
}
