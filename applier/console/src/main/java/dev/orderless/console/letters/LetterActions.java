package dev.orderless.console.letters;

import com.rabbitmq.client.Channel;
import dev.orderless.InvalidInputException;
import dev.orderless.OrderlessException;
import dev.orderless.TransientException;
import dev.orderless.amqp.DeadLetterQueue;
import dev.orderless.console.audit.AuditLog;
import dev.orderless.message.Envelope;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.amqp.rabbit.connection.Connection;

/**
 * What an operator does to stored letters, each action recorded in the {@link AuditLog} with its outcome (a refusal
 * or a failure too). Every action takes letters by a {@link LetterQuery} (chosen ids, or a filter), and only letters in
 * the statuses it may change: replay and purge take dead and parked letters, park dead ones, un-park parked ones.
 *
 * <p>A replay, for each chunk of letters:
 * <ol>
 *   <li>refuses a letter dead-lettered longer ago than the grace (or with no time), as {@link DeadLetterQueue}'s replay
 *       does: its operation may be older than tombstones compacted since;
 *   <li>publishes the rest to their work queue with confirms, as {@link DeadLetterQueue#replayProperties} says (no
 *       reason, replay count one higher);
 *   <li>marks them replayed once the broker confirmed them all. A failure before that leaves them dead, to be replayed
 *       again; a copy the broker had taken is then applied twice, which the sequence guard absorbs.
 * </ol>
 * An edited letter's body is read by the envelope reader before anything is sent: a body it refuses is refused here,
 * with its reason, and nothing changes.
 */
public final class LetterActions {
    /** The most letters one action takes. */
    public static final int MAX_LETTERS = 100_000;
    private static final int CHUNK = 200;
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final LetterStore store;
    private final AuditLog audit;
    private final Map<String, DeadLetterQueue> queues;
    private final Optional<Duration> grace;
    private final Clock clock;
    private final String instance;
    private final Envelope envelope;

    /**
     * @param store    the letters
     * @param audit    where every action is recorded
     * @param queues   each work queue's dead letters here, by work queue: where a replay sends a letter, and on which
     *                 broker
     * @param grace    the tombstone grace: older letters are refused by a replay (none: the collection is never
     *                 compacted)
     * @param clock    what "now" is, for a letter's age
     * @param instance this instance's name, in the audit
     */
    public LetterActions(LetterStore store, AuditLog audit, Map<String, DeadLetterQueue> queues,
                         Optional<Duration> grace, Clock clock, String instance) {
        this.store = store;
        this.audit = audit;
        this.queues = Map.copyOf(queues);
        this.grace = grace;
        this.clock = clock;
        this.instance = instance;
        this.envelope = Envelope.ofDefaults();
    }

    /**
     * What an action did.
     *
     * @param result its result line
     * @param count  how many letters it changed
     * @param audit  the id of its audit entry
     */
    public record Outcome(String result, long count, String audit) {
    }

    /** Sends the letters {@code query} chooses (dead or parked, {@code max} at most) back to their work queues. */
    public Outcome replay(LetterQuery query, int max, String user) {
        List<LetterStatus> from = within(query, List.of(LetterStatus.DEAD, LetterStatus.PARKED));
        List<String> ids = store.ids(query.withStatuses(from), limit(max));
        return recorded(user, "replay", query, ids, () -> {
            Map<String, Long> refused = new LinkedHashMap<>();
            long replayed = 0;
            for (int i = 0; i < ids.size(); i += CHUNK) {
                List<LetterStore.Sendable> chunk = store.sendable(ids.subList(i, Math.min(ids.size(), i + CHUNK)), from);
                Map<String, List<LetterStore.Sendable>> byQueue = new LinkedHashMap<>();
                for (LetterStore.Sendable letter : chunk) {
                    Optional<String> why = refusal(letter.letter());
                    if (why.isPresent()) {
                        refused.merge(why.get(), 1L, Long::sum);
                    } else {
                        byQueue.computeIfAbsent(letter.letter().queue(), q -> new ArrayList<>()).add(letter);
                    }
                }
                for (Map.Entry<String, List<LetterStore.Sendable>> queue : byQueue.entrySet()) {
                    send(queues.get(queue.getKey()), queue.getValue(), Optional.empty());
                    replayed += store.move(queue.getValue().stream().map(l -> l.letter().id()).toList(), from,
                            LetterStatus.REPLAYED, user);
                }
            }
            StringBuilder result = new StringBuilder("replayed " + replayed + " letter(s)");
            refused.forEach((why, n) -> result.append("; refused ").append(n).append(' ').append(why));
            return new Done(result.toString(), replayed);
        });
    }

    /**
     * Sends letter {@code id} back with {@code edited} as its body, once the envelope reader accepts it.
     *
     * @throws InvalidInputException if the envelope reader refuses the body, or the letter is not dead or parked
     */
    public Outcome editAndReplay(String id, byte[] edited, String user) {
        List<LetterStatus> from = List.of(LetterStatus.DEAD, LetterStatus.PARKED);
        LetterQuery query = LetterQuery.ids(List.of(id));
        return recorded(user, "edit-replay", query, List.of(id), () -> {
            List<LetterStore.Sendable> found = store.sendable(List.of(id), from);
            if (found.isEmpty()) {
                throw new InvalidInputException("letter " + id + " is not waiting (not stored, or replayed or purged"
                        + " already): nothing sent");
            }
            try {
                envelope.decode(edited);
            } catch (OrderlessException e) {
                throw new InvalidInputException("the edited body is not an orderless message: " + e.getMessage()
                        + "; nothing sent", e);
            }
            Optional<String> why = refusal(found.get(0).letter());
            if (why.isPresent()) {
                throw new InvalidInputException("letter " + id + " refused: " + why.get() + "; nothing sent");
            }
            send(queues.get(found.get(0).letter().queue()), found, Optional.of(edited));
            boolean marked = store.editedAndReplayed(id, edited, from, user);
            return new Done("edited and replayed letter " + id + " (" + edited.length + " bytes) to "
                    + found.get(0).letter().queue() + (marked ? "" : "; it had been replayed meanwhile"), 1);
        });
    }

    /** Sets the dead letters {@code query} chooses aside: kept, not counted as waiting, not taken by a replay of all. */
    public Outcome park(LetterQuery query, int max, String user) {
        return moved(query, max, user, "park", List.of(LetterStatus.DEAD), LetterStatus.PARKED, "parked");
    }

    /** Makes the parked letters {@code query} chooses dead again. */
    public Outcome unpark(LetterQuery query, int max, String user) {
        return moved(query, max, user, "unpark", List.of(LetterStatus.PARKED), LetterStatus.DEAD, "un-parked");
    }

    /** Drops the bodies of the dead or parked letters {@code query} chooses, for good. */
    public Outcome purge(LetterQuery query, int max, String user) {
        return moved(query, max, user, "purge", List.of(LetterStatus.DEAD, LetterStatus.PARKED), LetterStatus.PURGED,
                "purged");
    }

    private Outcome moved(LetterQuery query, int max, String user, String action, List<LetterStatus> allowed,
                          LetterStatus to, String done) {
        List<LetterStatus> from = within(query, allowed);
        List<String> ids = store.ids(query.withStatuses(from), limit(max));
        return recorded(user, action, query, ids, () -> {
            long moved = 0;
            for (int i = 0; i < ids.size(); i += 1000) {
                moved += store.move(ids.subList(i, Math.min(ids.size(), i + 1000)), from, to, user);
            }
            return new Done(done + " " + moved + " letter(s)" + (moved < ids.size() ? " (" + (ids.size() - moved)
                    + " changed by someone else meanwhile)" : ""), moved);
        });
    }

    /** The statuses of {@code allowed} that {@code query} asks for (all of them if it names none). */
    private static List<LetterStatus> within(LetterQuery query, List<LetterStatus> allowed) {
        if (query.statuses().isEmpty()) {
            return allowed;
        }
        List<LetterStatus> both = query.statuses().stream().filter(allowed::contains).toList();
        if (both.isEmpty()) {
            throw new InvalidInputException("status: this action takes " + allowed.stream().map(LetterStatus::stored)
                    .toList() + " letters, the query asks for " + query.statuses().stream().map(LetterStatus::stored)
                    .toList());
        }
        return both;
    }

    private static int limit(int max) {
        if (max < 1) {
            throw new InvalidInputException("max must be at least 1, was " + max);
        }
        return Math.min(max, MAX_LETTERS);
    }

    /** Why {@code letter} may not be replayed, if it may not. */
    private Optional<String> refusal(StoredLetter letter) {
        if (letter.heldIn().isPresent()) {
            return Optional.of((letter.bodyBytes() > LetterStore.MAX_BODY_BYTES ? "too large for the console"
                    : "with properties MongoDB cannot hold") + " (their bodies are in queue '" + letter.heldIn().get()
                    + "': replay them from there with DeadLetterQueue)");
        }
        if (!queues.containsKey(letter.queue())) {
            return Optional.of("of queue '" + letter.queue() + "', which no consumer of this application reads (replay"
                    + " them where it runs)");
        }
        if (grace.isEmpty()) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        if (!letter.timeKnown() || letter.deadLettered().plus(grace.get()).isBefore(now)) {
            return Optional.of("older than the replay grace " + grace.get() + " (the tombstone grace: they could"
                    + " resurrect what was removed; park or purge them)");
        }
        return Optional.empty();
    }

    /** Publishes {@code letters} to {@code target}'s work queue and waits for the broker to confirm every one. */
    private static void send(DeadLetterQueue target, List<LetterStore.Sendable> letters, Optional<byte[]> body) {
        String queue = target.workQueue();
        try (Connection connection = target.connectionFactory().createConnection();
             Channel channel = connection.getDelegate().createChannel()) {   // a raw channel: confirm mode is its own
            channel.queueDeclarePassive(queue);
            channel.confirmSelect();
            AtomicBoolean returned = new AtomicBoolean();
            channel.addReturnListener(r -> returned.set(true));   // unroutable: confirmed, yet delivered nowhere
            for (LetterStore.Sendable letter : letters) {
                channel.basicPublish("", queue, true, DeadLetterQueue.replayProperties(letter.properties()),
                        body.orElse(letter.body()));
            }
            channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT.toMillis());
            if (returned.get()) {
                throw new TransientException("the broker could not route letters to queue '" + queue + "': they stay"
                        + " dead, replay them again", null, false);
            }
        } catch (org.springframework.amqp.AmqpException e) {
            throw dev.orderless.broker.internal.BrokerRefusals.named(target.connectionFactory(),
                    "replaying letters to queue '" + queue + "'", e);
        } catch (IOException | TimeoutException e) {
            throw new TransientException("replaying letters to queue '" + queue + "': " + e + "; they stay dead, replay"
                    + " them again", e, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("replaying letters to queue '" + queue + "': interrupted", e, false);
        }
    }

    private record Done(String result, long count) {
    }

    private interface Work {
        Done run();
    }

    /** Runs {@code work} and records its outcome, or its refusal or failure, in the audit. */
    private Outcome recorded(String user, String action, LetterQuery query, List<String> ids, Work work) {
        Optional<String> queue = query.queue();
        if (queue.isEmpty() && !ids.isEmpty() && ids.size() <= LetterQuery.MAX_IDS) {
            List<String> queues = store.queuesOf(ids);   // the audit names the queue of letters chosen by id too
            queue = queues.size() == 1 ? Optional.of(queues.get(0)) : Optional.empty();
        }
        String selection = query.describe();
        Done done;
        try {
            done = work.run();
        } catch (RuntimeException e) {
            audit.record(user, instance, action, queue, selection, ids, 0, String.valueOf(e.getMessage()), false);
            throw e;
        }
        String auditId = audit.record(user, instance, action, queue, selection, ids, done.count(), done.result(), true);
        return new Outcome(done.result(), done.count(), auditId);
    }
}
