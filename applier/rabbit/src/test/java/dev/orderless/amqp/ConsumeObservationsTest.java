package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoDatabase;
import dev.orderless.consume.internal.ConsumeObservations;
import dev.orderless.apply.Operation;
import dev.orderless.testing.MongoExtension;
import dev.orderless.testing.rabbit.RabbitExtension;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * The consumer's observations, per message and in batches: one {@code orderless.consume} per message, and
 * every {@code orderless.apply} inside the consume of its message, so a trace shows the apply.
 */
@ExtendWith({MongoExtension.class, RabbitExtension.class})
class ConsumeObservationsTest {

    /** Every observation that ended, as a tracing handler would see it. */
    static final class Recorded implements ObservationHandler<Observation.Context> {
        final Queue<Observation.Context> stopped = new ConcurrentLinkedQueue<>();

        @Override
        public void onStop(Observation.Context context) {
            stopped.add(context);
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }

        List<Observation.Context> named(String name) {
            return stopped.stream().filter(c -> name.equals(c.getName())).toList();
        }
    }

    @Test
    void each_message_has_its_consume_and_its_apply_inside_it(ConnectionFactory cf, MongoDatabase db) throws Exception {
        observe(cf, db, 1);
    }

    @Test
    void in_batches_each_message_has_its_consume_and_an_apply_of_its_bulk_inside_it(ConnectionFactory cf,
                                                                                      MongoDatabase db) throws Exception {
        Recorded recorded = observe(cf, db, 10);
        assertThat(recorded.named(ConsumeObservations.APPLY)).extracting(c -> c.getLowCardinalityKeyValue("orderless.batch")
                .getValue()).contains("true");
    }

    private static Recorded observe(ConnectionFactory cf, MongoDatabase db, int batch) throws Exception {
        Recorded recorded = new Recorded();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(recorded);
        List<Operation> ops = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            ops.add(Operation.add("s" + (i % 4), i + 1, "classes", "C" + i));
        }
        try (ConsumerFixture fixture = new ConsumerFixture(cf, db, "observed")) {
            ConsumerOptions options = batch > 1 ? fixture.options(1).withBatch(batch, Duration.ofMillis(50))
                    : fixture.options(1).perMessage();
            fixture.start(OperationConsumer.builder(cf, fixture.applier).options(options).observations(registry));
            fixture.publish(ops);
            fixture.awaitHandled(ops.size(), Duration.ofSeconds(60));
            Awaitility.await("every consume observed").atMost(Duration.ofSeconds(30))
                    .until(() -> recorded.named(ConsumeObservations.CONSUME).size() == ops.size());
        }

        List<Observation.Context> consumes = recorded.named(ConsumeObservations.CONSUME);
        assertThat(consumes).extracting(c -> c.getLowCardinalityKeyValue("orderless.outcome").getValue())
                .containsOnly("applied");
        // what a handler written for Spring AMQP's listeners expects to find: the message it received
        assertThat(consumes).allSatisfy(c -> assertThat(((io.micrometer.observation.transport.ReceiverContext<?>) c)
                .getCarrier()).isInstanceOf(org.springframework.amqp.core.Message.class));
        Map<String, Long> perMessage = consumes.stream().collect(Collectors.groupingBy(
                c -> c.getHighCardinalityKeyValue("orderless.entity").getValue() + "@"
                        + c.getHighCardinalityKeyValue("orderless.seq").getValue(), Collectors.counting()));
        assertThat(perMessage).hasSize(ops.size()).allSatisfy((op, count) -> assertThat(count).isEqualTo(1L));
        List<Observation.Context> applies = recorded.named(ConsumeObservations.APPLY);
        assertThat(applies).hasSize(ops.size()).allSatisfy(apply -> {
            assertThat(apply.getParentObservation()).as("the apply's parent").isNotNull();
            assertThat(apply.getParentObservation().getContextView().getName()).isEqualTo(ConsumeObservations.CONSUME);
        });
        return recorded;
    }
}
