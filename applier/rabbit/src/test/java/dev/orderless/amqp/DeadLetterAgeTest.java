package dev.orderless.amqp;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import dev.orderless.consume.internal.DeadLetterFields;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;

/** How old a dead letter is, by what orderless wrote and what RabbitMQ wrote: never younger than it is. */
class DeadLetterAgeTest {
    private static final Instant NOW = Instant.parse("2026-11-25T12:00:00Z");

    @Test
    void a_dead_lettered_at_a_producer_set_in_the_future_is_replaced_by_now_when_orderless_dead_letters() {
        Message message = MessageBuilder.withBody(new byte[0])
                .setHeader(DeadLetterFields.DEAD_LETTERED_AT, "2099-01-01T00:00:00Z").build();

        Instant written = Instant.parse(DeadLetterHeaders.properties(message, "q", "bad input: x", "id").getHeaders()
                .get(DeadLetterFields.DEAD_LETTERED_AT).toString());

        assertThat(written).isBefore(Instant.parse("2099-01-01T00:00:00Z")).isBeforeOrEqualTo(Instant.now());
    }

    @Test
    void a_replayed_letter_that_fails_again_keeps_its_first_dead_lettered_at() {
        assertThat(DeadLetterFields.deadLetteredAt("2026-11-20T08:00:00Z", NOW))
                .isEqualTo(Instant.parse("2026-11-20T08:00:00Z"));
        assertThat(DeadLetterFields.deadLetteredAt("not a time", NOW)).isEqualTo(NOW);
        assertThat(DeadLetterFields.deadLetteredAt(null, NOW)).isEqualTo(NOW);
    }

    @Test
    void a_letter_the_broker_dead_lettered_is_as_old_as_the_earliest_time_in_its_x_death() {
        AMQP.BasicProperties props = props(Map.of("x-death", List.of(
                Map.of("reason", "delivery_limit", "time", Date.from(NOW.minus(Duration.ofHours(1)))),
                Map.of("reason", "expired", "time", Date.from(NOW.minus(Duration.ofHours(5)))))));

        assertThat(DeadLetterQueue.firstDeadLettered(props, NOW)).contains(NOW.minus(Duration.ofHours(5)));
    }

    @Test
    void a_young_orderless_header_does_not_make_a_letter_younger_than_its_x_death() {
        AMQP.BasicProperties props = props(Map.of(DeadLetterFields.DEAD_LETTERED_AT, NOW.minusSeconds(10).toString(),
                "x-death", List.of(Map.of("time", Date.from(NOW.minus(Duration.ofDays(30)))))));

        assertThat(DeadLetterQueue.firstDeadLettered(props, NOW)).contains(NOW.minus(Duration.ofDays(30)));
    }

    @Test
    void a_dead_lettered_at_in_the_future_is_not_trusted_and_without_another_time_the_age_is_unknown() {
        assertThat(DeadLetterQueue.firstDeadLettered(props(Map.of(DeadLetterFields.DEAD_LETTERED_AT,
                "2099-01-01T00:00:00Z")), NOW)).isEmpty();
        assertThat(DeadLetterQueue.firstDeadLettered(props(Map.of()), NOW)).isEmpty();
    }

    private static AMQP.BasicProperties props(Map<String, Object> headers) {
        return new AMQP.BasicProperties.Builder().headers(headers).build();
    }
}
