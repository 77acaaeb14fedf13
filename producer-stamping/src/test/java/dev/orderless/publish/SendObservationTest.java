package dev.orderless.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.orderless.apply.Operation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.MessageProperties;

class SendObservationTest {

    @Test
    void a_tracing_handler_writes_its_context_into_the_messages_headers() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<SenderContext<MessageProperties>>() {
            @Override
            public void onStart(SenderContext<MessageProperties> context) {
                context.getSetter().set(context.getCarrier(), "traceparent", "00-abc-def-01");
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return context instanceof SenderContext<?>;
            }
        });
        MessageProperties properties = new MessageProperties();

        Observation observation = new SendObservation(registry, "", "enrollments")
                .start(properties, Optional.of(Operation.add("s1", 7, "classes", "C1")));
        observation.stop();

        assertThat((String) properties.getHeader("traceparent")).isEqualTo("00-abc-def-01");
        assertThat(observation.getContext().getLowCardinalityKeyValue("orderless.routing_key").getValue())
                .isEqualTo("enrollments");
        assertThat(observation.getContext().getHighCardinalityKeyValue("orderless.seq").getValue()).isEqualTo("7");
    }

    @Test
    void a_handler_that_fails_to_start_leaves_the_message_untraced_instead_of_failing_the_send() {
        ObservationRegistry registry = ObservationRegistry.create();
        List<String> starts = new ArrayList<>();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                starts.add(context.getName());
                throw new IllegalStateException("tracer version clash");
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        SendObservation observation = new SendObservation(registry, "", "enrollments");

        Observation first = observation.start(new MessageProperties(), Optional.empty());
        Observation second = observation.start(new MessageProperties(), Optional.empty());

        assertThat(first.isNoop()).isTrue();
        assertThat(second.isNoop()).isTrue();
        assertThat(starts).containsExactly(ConfirmingPublisher.PUBLISH, ConfirmingPublisher.PUBLISH);
    }
}
