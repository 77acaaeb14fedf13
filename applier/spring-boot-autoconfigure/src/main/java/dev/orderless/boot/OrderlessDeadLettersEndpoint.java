package dev.orderless.boot;

import dev.orderless.amqp.ConsumerOptions;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.broker.QueueTopology;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;

/**
 * The consumer's dead letters, at {@code /actuator/orderlessdeadletters} once exposed
 * ({@code management.endpoints.web.exposure.include=health,orderlessdeadletters}). On {@link DeadLetterQueue}:
 * <ul>
 *   <li>{@code GET}: the letters by kind of reason, with counts and samples, and the parked ones;
 *   <li>{@code POST .../replay} with optional {@code kind} and {@code max}: back to the work queue,
 *       refusing letters older than {@code orderless.compaction.grace} when compaction runs;
 *   <li>{@code POST .../park} with optional {@code kind} and {@code max}: to the parking queue;
 *   <li>{@code DELETE} with {@code kind} or {@code max} (or both; never neither): dropped.
 * </ul>
 * {@code max} defaults to {@value #DEFAULT_MAX}; each call looks at most at the letters there when it began.
 * A {@code kind} must be one of {@link DeadLetterQueue#KINDS}: anything refused answers 400 with a JSON body that
 * says why ({@code error}) and names what is valid ({@code kinds}), and does nothing. Read-only by default: the writes need
 * {@code management.endpoint.orderlessdeadletters.access=unrestricted}, so exposing the endpoint to look
 * does not also let anyone replay or drop letters.
 */
@WebEndpoint(id = "orderlessdeadletters", defaultAccess = Access.READ_ONLY)
public final class OrderlessDeadLettersEndpoint {
    static final int DEFAULT_MAX = 1000;

    private final ConnectionFactory connectionFactory;
    private final ConsumerOptions options;
    private final DeadLetterQueue letters;
    private final Optional<Duration> grace;
    private final Clock clock;

    OrderlessDeadLettersEndpoint(ConnectionFactory connectionFactory, ConsumerOptions options, Optional<Duration> grace,
                                 Clock clock) {
        // the publisher connection, as the consumer's dead letters use: a resource alarm that blocks these
        // publishes must not also stop the consumers' acks
        ConnectionFactory publishing = connectionFactory.getPublisherConnectionFactory();
        this.connectionFactory = publishing != null ? publishing : connectionFactory;
        this.options = options;
        this.letters = DeadLetterQueue.of(this.connectionFactory, options.queue(), options.deadLetterQueue());
        this.grace = grace;
        this.clock = clock;
    }

    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> letters(@Nullable String max) {
        Optional<WebEndpointResponse<Map<String, Object>>> refused = refusedMax(max);
        if (refused.isPresent()) {
            return refused.get();
        }
        int limit = limit(max);
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("queue", options.queue());
        view.put("deadLetterQueue", options.deadLetterQueue());
        List<DeadLetterQueue.Group> groups = letters.list(limit);
        view.put("kinds", DeadLetterQueue.byKind(groups));
        view.put("groups", groups);
        String parking = QueueTopology.parkingQueue(options.deadLetterQueue());
        view.put("parkingQueue", parking);
        // a broker failing over in between throws (transient), rather than leaving "parked" out as if there were none
        if (QueueTopology.lookup(connectionFactory, parking).isPresent()) {
            view.put("parked", DeadLetterQueue.of(connectionFactory, options.queue(), parking).list(limit));
        }
        grace.ifPresent(g -> view.put("replayGrace", g.toString()));
        return new WebEndpointResponse<>(view);
    }

    /** {@code replay} or {@code park} up to {@code max} letters of {@code kind} (every kind if absent). */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> act(@Selector String action, @Nullable String kind,
                                                        @Nullable String max) {
        if (!action.equals("replay") && !action.equals("park")) {
            return refused("unknown action '" + action + "': POST .../replay or .../park", Map.of("actions",
                    List.of("replay", "park")));
        }
        Optional<WebEndpointResponse<Map<String, Object>>> refused = refusedKind(kind).or(() -> refusedMax(max));
        if (refused.isPresent()) {
            return refused.get();
        }
        Optional<String> ofKind = given(kind);
        if (action.equals("replay")) {
            // without a grace the collection is not compacted: no letter is too old to replay
            DeadLetterQueue.Replay replay = grace.map(g -> letters.replay(ofKind, limit(max), g, clock))
                    .orElseGet(() -> letters.replay(ofKind, limit(max)));
            return new WebEndpointResponse<>(Map.of("replayed", replay.replayed(), "refused", replay.refused()));
        }
        return new WebEndpointResponse<>(Map.of("parked", letters.park(ofKind, limit(max))));
    }

    /**
     * Drops up to {@code max} letters of {@code kind} (every kind if absent); one of them must be given, so a
     * bare {@code DELETE} drops nothing by accident.
     */
    @DeleteOperation
    public WebEndpointResponse<Map<String, Object>> purge(@Nullable String kind, @Nullable String max) {
        Optional<WebEndpointResponse<Map<String, Object>>> refused = refusedKind(kind).or(() -> refusedMax(max));
        if (refused.isPresent()) {
            return refused.get();
        }
        Optional<String> ofKind = given(kind);
        if (ofKind.isEmpty() && given(max).isEmpty()) {
            return refused("purge drops letters for good: give a kind, or max, or both", Map.of("kinds", KINDS));
        }
        return new WebEndpointResponse<>(Map.of("purged", letters.purge(ofKind, limit(max))));
    }

    private static final List<String> KINDS = List.copyOf(DeadLetterQueue.KINDS);

    /** A parameter as given, stripped; empty if absent or blank. */
    private static Optional<String> given(@Nullable String parameter) {
        return Optional.ofNullable(parameter).map(String::strip).filter(k -> !k.isEmpty());
    }

    /** A 400 whose JSON names the valid kinds, for a kind that is none of them. */
    private static Optional<WebEndpointResponse<Map<String, Object>>> refusedKind(@Nullable String kind) {
        Optional<String> ofKind = given(kind);
        if (ofKind.isPresent() && !DeadLetterQueue.KINDS.contains(ofKind.get())) {
            return Optional.of(refused("unknown kind '" + ofKind.get() + "'", Map.of("kinds", KINDS)));
        }
        return Optional.empty();
    }

    /**
     * A 400 for a max that is not a whole number of at least 1. Taken as text, not as an {@code Integer}: Actuator
     * would answer a number it cannot convert with its own error body, which says nothing of max.
     */
    private static Optional<WebEndpointResponse<Map<String, Object>>> refusedMax(@Nullable String max) {
        Optional<String> given = given(max);
        if (given.isEmpty()) {
            return Optional.empty();
        }
        try {
            int n = Integer.parseInt(given.get());
            return n < 1 ? Optional.of(refused("max must be at least 1, was " + n, Map.of())) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.of(refused("max must be a whole number of at least 1, was '" + given.get() + "'", Map.of()));
        }
    }

    /** 400 Bad Request, its body {@code {"error": ..., and what is valid}}: nothing was done. */
    private static WebEndpointResponse<Map<String, Object>> refused(String error, Map<String, Object> valid) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.putAll(valid);
        return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
    }

    /** {@code max}, once {@link #refusedMax} let it through; the default if absent. */
    private static int limit(@Nullable String max) {
        return given(max).map(Integer::parseInt).orElse(DEFAULT_MAX);
    }
}
