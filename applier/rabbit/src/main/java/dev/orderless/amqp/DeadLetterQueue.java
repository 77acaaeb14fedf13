package dev.orderless.amqp;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.TransientException;
import dev.orderless.consume.internal.ConsumerMetrics;
import dev.orderless.consume.internal.DeadLetterFields;
import dev.orderless.broker.QueueTopology;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * The dead letters of one work queue, for whoever operates it: what is there, by kind of reason, and
 * sending some back to be applied again (after the cause was fixed: a schema that now declares the
 * field, a MongoDB role granted). Letters of both consumers are understood: the AMQP 0-9-1 consumer's
 * republish (the reason in {@code x-orderless-*} headers), the AMQP 1.0 consumer's (the broker dead-lettered
 * it, the reason in {@code x-opt-orderless-*} annotations beside {@code x-death}), and the broker's own.
 *
 * <ul>
 *   <li>{@link #list(int)} looks at the first letters and hands every one back, untouched (their order in
 *       the queue may change).
 *   <li>{@link #replay} moves letters of one kind (or every kind) to the work queue, each published with
 *       confirms and {@value DeadLetterFields#REPLAY_COUNT} one higher and without the reason it carried, and removed from the dead-letter
 *       queue only once the broker confirmed the copy: a failure leaves it where it was. A letter
 *       dead-lettered longer ago than the tombstone grace is refused and stays: its operation may be
 *       older than tombstones that were compacted since, so it could only end {@code beyond_horizon}.
 *       A letter's age counts from the earliest time anyone trustworthy says it was dead-lettered
 *       ({@link #firstDeadLettered}): orderless's header, unless it is in the future, and every {@code time}
 *       in RabbitMQ's {@code x-death} (what a letter the broker moved itself, at a quorum queue's delivery
 *       limit, carries). No time at all: refused, as its age cannot be judged. The grace is the compaction's:
 *       for a collection that is never compacted, {@link #replay(Optional, int)} sends back every letter, whatever
 *       its age.
 *   <li>{@link #park} moves letters to the parking queue, with the same confirms: kept, out of the way.
 *   <li>{@link #purge} drops letters.
 * </ul>
 * Each call looks at most at the letters that were in the queue when it began, so letters it hands back
 * are not looked at twice.
 */
public final class DeadLetterQueue {
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private final ConnectionFactory connectionFactory;
    private final String workQueue;
    private final String deadLetterQueue;

    private DeadLetterQueue(ConnectionFactory connectionFactory, String workQueue, String deadLetterQueue) {
        this.connectionFactory = connectionFactory;
        this.workQueue = workQueue;
        this.deadLetterQueue = deadLetterQueue;
    }

    /**
     * The dead letters of {@code workQueue}, in {@code deadLetterQueue}; nothing is read or moved until asked.
     *
     * @param connectionFactory the broker (a publisher connection, if the factory has one, keeps a blocked broker from
     *                          stalling a consumer's acks)
     * @param workQueue         where a replay sends letters back
     * @param deadLetterQueue   where the letters are, another queue than {@code workQueue}
     * @return the dead-letter queue
     * @throws InvalidConfigurationException if a part is missing or both names are the same
     */
    public static DeadLetterQueue of(ConnectionFactory connectionFactory, String workQueue, String deadLetterQueue) {
        if (connectionFactory == null || workQueue == null || workQueue.isBlank() || deadLetterQueue == null
                || deadLetterQueue.isBlank() || workQueue.equals(deadLetterQueue)) {
            throw new InvalidConfigurationException("dead-letter queue: a connection factory and two different queue"
                    + " names are required, were '" + workQueue + "' and '" + deadLetterQueue + "'");
        }
        return new DeadLetterQueue(connectionFactory, workQueue, deadLetterQueue);
    }

    /**
     * One letter as {@link #peek} shows it, read from its properties and body as they arrived: for a reader that takes
     * letters off the queue itself (the console keeps them in MongoDB) and must understand them as this class does.
     *
     * @param props the letter's properties, as the broker delivered them
     * @param body  its body
     * @param now   the time it is read at: a dead-lettering time after it is not trusted ({@link #firstDeadLettered})
     * @return the letter, its body as text cut at {@value #PEEK_BODY_LIMIT} characters
     */
    public static Letter read(AMQP.BasicProperties props, byte[] body, Instant now) {
        String reason = field(props, DeadLetterFields.REASON).orElseGet(() -> brokerReason(props));
        OptionalLong seq = field(props, DeadLetterFields.SEQ).flatMap(DeadLetterQueue::whole)
                .map(OptionalLong::of).orElse(OptionalLong.empty());
        long replays = header(props, DeadLetterFields.REPLAY_COUNT).flatMap(DeadLetterQueue::whole).orElse(0L);
        return new Letter(kindOf(props), reason, field(props, DeadLetterFields.ENTITY), seq,
                field(props, DeadLetterFields.LETTER_ID), firstDeadLettered(props, now), replays, bodyText(body),
                deaths(props));
    }

    /**
     * What letters failing for one cause share, as {@link #list} groups them: {@code letter}'s reason without its
     * subject and with what varies from letter to letter (entity, numbers) set aside.
     *
     * @param letter a letter
     * @return its group's key
     */
    public static String causeOf(Letter letter) {
        return ReasonShape.of(letter.reason(), letter.entity(), letter.seq());
    }

    /**
     * {@code letter}'s reason as its group shows it: without the {@code (entity 'e', seq 7)} at its end.
     *
     * @param letter a letter
     * @return its reason without its subject
     */
    public static String reasonWithoutSubject(Letter letter) {
        return ReasonShape.withoutSubject(letter.reason(), letter.entity(), letter.seq());
    }

    /**
     * The properties a letter is sent back to its work queue with, as {@link #replay} sends it: without the reason
     * it carried (it fails afresh or not at all), {@value DeadLetterFields#REPLAY_COUNT} one higher, persistent.
     *
     * @param props the letter's properties as it was dead-lettered
     * @return the properties to replay it with
     */
    public static AMQP.BasicProperties replayProperties(AMQP.BasicProperties props) {
        return replayed(props);
    }

    /**
     * The work queue whose letters these are.
     *
     * @return the work queue a replay sends letters back to
     */
    public String workQueue() {
        return workQueue;
    }

    /**
     * The dead-letter queue itself.
     *
     * @return the queue the letters are in
     */
    public String deadLetterQueue() {
        return deadLetterQueue;
    }

    /**
     * The broker connection the letters are read and moved on, for a tool that asks the broker about the same queues
     * (the console's backlog counts both queues on it).
     *
     * @return the connection factory given to {@link #of}
     */
    public ConnectionFactory connectionFactory() {
        return connectionFactory;
    }

    /**
     * Every kind a letter can have: the consumer's reasons ({@code bad_input}, {@code unknown_field},
     * {@code unsupported_envelope}, {@code oversized}, {@code beyond_horizon}, {@code no_progress},
     * {@code too_large}, {@code held_too_long}), and
     * {@value #UNKNOWN_KIND} for a letter without one (dead-lettered by the broker itself, at its delivery limit).
     */
    public static final Set<String> KINDS;
    /** The kind of a letter that carries no reason of orderless's: the broker dead-lettered it itself. */
    public static final String UNKNOWN_KIND = "unknown";
    /** RabbitMQ's record of each time it dead-lettered a message itself. */
    private static final String X_DEATH = "x-death";

    static {
        Set<String> kinds = new TreeSet<>();
        for (ConsumerMetrics.DeadLetterReason reason : ConsumerMetrics.DeadLetterReason.values()) {
            kinds.add(reason.tag());
        }
        kinds.add(UNKNOWN_KIND);
        KINDS = Collections.unmodifiableSet(kinds);
    }

    /**
     * Refuses a kind no letter can have: a typo would otherwise select nothing and report success.
     *
     * @throws dev.orderless.InvalidInputException naming the kind and the kinds there are
     */
    public static void requireKind(Optional<String> kind) {
        if (kind.isPresent() && !KINDS.contains(kind.get())) {
            throw new dev.orderless.InvalidInputException("unknown kind '" + kind.get() + "': one of " + KINDS);
        }
    }

    /**
     * Letters of one kind that failed for one reason, whatever entity each held: how many were seen, the reason
     * as the first of them carries it, and up to three of their entities (those the letters name).
     */
    public record Group(String kind, String reason, long count, List<String> entities) {
    }

    /** What a replay did: letters sent back, and letters refused (with why), by kind. */
    public record Replay(long replayed, Map<String, Long> refused) {
    }

    /**
     * The letters among the first {@code max}, grouped by kind and reason (what varies from letter to letter, the
     * entity and seq a reason names, set aside): the kinds with most letters first, and in each kind the most frequent reason
     * first. A group's reason is its first letter's, without the entity and seq at its end (the group names its
     * entities).
     */
    public List<Group> list(int max) {
        Map<List<String>, GroupCount> groups = new LinkedHashMap<>();
        onChannel(channel -> walk(channel, Optional.empty(), max, letter -> {
            AMQP.BasicProperties props = letter.getProps();
            String reason = field(props, DeadLetterFields.REASON).orElseGet(() -> brokerReason(props));
            Optional<String> entity = field(props, DeadLetterFields.ENTITY);
            OptionalLong seq = field(props, DeadLetterFields.SEQ).flatMap(DeadLetterQueue::whole)
                    .map(OptionalLong::of).orElse(OptionalLong.empty());
            String kind = kindOf(props);
            groups.computeIfAbsent(List.of(kind, ReasonShape.of(reason, entity, seq)),
                    k -> new GroupCount(kind, ReasonShape.withoutSubject(reason, entity, seq))).add(entity);
            return true;   // closing the channel hands every letter back
        }));
        List<Group> listed = new ArrayList<>();
        groups.values().forEach(group -> listed.add(group.group()));
        Map<String, Long> kinds = byKind(listed);
        listed.sort(java.util.Comparator.<Group>comparingLong(g -> -kinds.get(g.kind())).thenComparing(Group::kind)
                .thenComparingLong(g -> -g.count()));
        return listed;
    }

    /**
     * One dead letter as an operator reads it.
     *
     * @param kind            its reason's kind, one of {@link #KINDS}
     * @param reason          why it was dead-lettered, as its reason header (or RabbitMQ's {@code x-death}) says
     * @param entity          the entity it names, if its envelope could be read that far
     * @param seq             the seq it names, likewise
     * @param letterId        the id orderless gave it when it dead-lettered it, if it did
     * @param deadLettered    the earliest time it is known to have been dead-lettered, if known
     * @param replays         how many times it was replayed before
     * @param body            its body as UTF-8 text, cut at {@value #PEEK_BODY_LIMIT} characters (then ending in
     *                        {@code "... (N bytes)"})
     * @param deaths          what RabbitMQ's {@code x-death} records, one line per entry, newest first (a letter
     *                        orderless republished itself has none)
     */
    public record Letter(String kind, String reason, Optional<String> entity, OptionalLong seq,
                         Optional<String> letterId, Optional<Instant> deadLettered, long replays, String body,
                         List<String> deaths) {
        /** Copies the list. */
        public Letter {
            deaths = List.copyOf(deaths);
        }
    }

    /** How much of a letter's body {@link #peek} returns. */
    public static final int PEEK_BODY_LIMIT = 16_384;
    /** How many letters {@link #peek} looks at, at most, to find those of its kind. */
    public static final int PEEK_SCAN_LIMIT = 1_000;

    /**
     * The first {@code max} letters of {@code kind} (every kind if empty), in queue order, each handed back
     * untouched (closing the channel returns them; none is acked). It looks at the first {@value #PEEK_SCAN_LIMIT}
     * letters at most (and no more than were there when it began): a kind whose letters lie deeper is not found,
     * and while it looks, the letters it took are out of the queue for other readers.
     *
     * @param kind which kind to show, or every kind
     * @param max  how many letters at most
     * @return the letters, in queue order
     * @throws dev.orderless.InvalidInputException if {@code kind} is none of {@link #KINDS}
     */
    public List<Letter> peek(Optional<String> kind, int max) {
        requireKind(kind);
        List<Letter> letters = new ArrayList<>();
        Instant now = Instant.now();
        onChannel(channel -> walk(channel, kind, max, PEEK_SCAN_LIMIT, letter -> {
            letters.add(read(letter.getProps(), letter.getBody(), now));
            return true;
        }));
        return letters;
    }

    private static String bodyText(byte[] body) {
        String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
        if (text.length() <= PEEK_BODY_LIMIT) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(PEEK_BODY_LIMIT - 1)) ? PEEK_BODY_LIMIT - 1 : PEEK_BODY_LIMIT;
        return text.substring(0, end) + "... (" + body.length + " bytes)";
    }

    /**
     * How many letters the dead-letter queue holds now, as the broker counts them (letters a reader holds unacked
     * are not counted).
     *
     * @return the count
     * @throws dev.orderless.OrderlessException naming the queue, if the broker refuses or does not answer
     */
    public long depth() {
        return onChannel(channel -> (long) channel.queueDeclarePassive(deadLetterQueue).getMessageCount());
    }

    /** RabbitMQ's x-death entries, one line each: how many times, why, from which queue, when it first was. */
    private static List<String> deaths(AMQP.BasicProperties props) {
        Object deaths = props.getHeaders() == null ? null : props.getHeaders().get(X_DEATH);
        List<String> lines = new ArrayList<>();
        if (deaths instanceof List<?> list) {
            for (Object death : list) {
                if (death instanceof Map<?, ?> entry) {
                    lines.add(entry.get("reason") + " from queue '" + entry.get("queue") + "', " + entry.get("count")
                            + " time(s)" + (entry.get("time") instanceof java.util.Date time
                            ? ", first at " + time.toInstant() : ""));
                }
            }
        }
        return lines;
    }

    /** How many letters of each kind {@code groups} hold, most frequent first. */
    public static Map<String, Long> byKind(List<Group> groups) {
        Map<String, Long> kinds = new HashMap<>();
        groups.forEach(group -> kinds.merge(group.kind(), group.count(), Long::sum));
        Map<String, Long> sorted = new LinkedHashMap<>();
        kinds.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()
                .thenComparing(Map.Entry.comparingByKey())).forEach(e -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    /** A group as it is counted: its first reason, and its first three entities. */
    private static final class GroupCount {
        private final String kind;
        private final String reason;
        private final java.util.Set<String> entities = new java.util.LinkedHashSet<>();
        private long count;

        GroupCount(String kind, String reason) {
            this.kind = kind;
            this.reason = reason;
        }

        void add(Optional<String> entity) {
            count++;
            entity.filter(e -> entities.size() < 3).ifPresent(entities::add);
        }

        Group group() {
            return new Group(kind, reason, count, List.copyOf(entities));
        }
    }

    /**
     * Sends back up to {@code max} letters of {@code kind} (every kind if empty) to the work queue of a collection that
     * is compacted: a letter dead-lettered longer ago than {@code grace} (or with no time at all) is refused and stays,
     * as its operation may be older than tombstones compacted since and could only end {@code beyond_horizon}.
     *
     * @param kind  the kind of letters to send back; empty for every kind
     * @param max   the most letters to send back
     * @param grace the tombstone grace of the work queue's collection ({@code TombstoneCompactor}'s, the
     *              {@code CompactionSchedule}'s): older letters are refused
     * @param clock what "now" is, for a letter's age
     * @return how many went back, and how many were refused, by kind
     */
    public Replay replay(Optional<String> kind, int max, Duration grace, Clock clock) {
        return replay(kind, max, props -> {
            Instant now = clock.instant();
            Optional<Instant> at = firstDeadLettered(props, now);
            return at.isPresent() && !at.get().plus(grace).isBefore(now);
        });
    }

    /**
     * Sends back up to {@code max} letters of {@code kind} (every kind if empty) to the work queue of a collection that
     * is never compacted (no compaction runs on it, in any application): no tombstone is ever dropped, so any letter
     * can be judged again and none is refused for its age, even one that carries no time. Where the collection is
     * compacted, pass its grace to {@link #replay(Optional, int, Duration, Clock)} instead.
     *
     * @param kind the kind of letters to send back; empty for every kind
     * @param max  the most letters to send back
     * @return how many went back ({@link Replay#refused()} is empty)
     */
    public Replay replay(Optional<String> kind, int max) {
        return replay(kind, max, props -> true);
    }

    /** Sends back the letters {@code youngEnough} accepts; counts the others, by kind, as refused. */
    private Replay replay(Optional<String> kind, int max, java.util.function.Predicate<AMQP.BasicProperties> youngEnough) {
        requireKind(kind);
        requireQueue(workQueue, "dead-letter replay: the work queue '" + workQueue + "' does not exist; declare it"
                + " (QueueTopology.declare) before sending letters back to it");
        Map<String, Long> refused = new HashMap<>();
        long replayed = onChannel(channel -> walk(channel, kind, max, confirming(channel, workQueue, letter -> {
            if (!youngEnough.test(letter.getProps())) {
                refused.merge(kindOf(letter.getProps()), 1L, Long::sum);
                return Optional.empty();
            }
            return Optional.of(replayed(letter.getProps()));
        })));
        return new Replay(replayed, Map.copyOf(refused));
    }

    /**
     * Moves up to {@code max} letters of {@code kind} (every kind if empty) to the parking queue
     * ({@link QueueTopology#parkingQueue}, declared if missing): out of the way of replays, still kept.
     * List, replay or purge them with {@code DeadLetterQueue.of(factory, workQueue, parkingQueue)}.
     *
     * @return how many were moved
     */
    public long park(Optional<String> kind, int max) {
        requireKind(kind);
        String parking = QueueTopology.parkingQueue(deadLetterQueue);
        if (QueueTopology.lookup(connectionFactory, parking).isEmpty()) {
            new RabbitAdmin(connectionFactory).declareQueue(QueueBuilder.durable(parking).build());
        }
        return onChannel(channel -> walk(channel, kind, max, confirming(channel, parking,
                letter -> Optional.of(letter.getProps()))));
    }

    /**
     * Drops up to {@code max} letters of {@code kind} (every kind if empty), for good: for letters whose
     * operations nobody needs any more (a test's, or superseded by a later correction).
     *
     * @return how many were dropped
     */
    public long purge(Optional<String> kind, int max) {
        requireKind(kind);
        return onChannel(channel -> walk(channel, kind, max, letter -> {
            channel.basicAck(letter.getEnvelope().getDeliveryTag(), false);
            return true;
        }));
    }

    /** What a walk does with one letter; true if it counts towards the walk's {@code max}. */
    private interface Visit {
        boolean visit(GetResponse letter) throws IOException, InterruptedException, TimeoutException;
    }

    /**
     * Takes letters one by one, at most as many as the queue held when it began, and hands those of
     * {@code kind} to {@code visit} until {@code max} of them counted. What is not acked goes back when
     * the channel closes.
     */
    private long walk(Channel channel, Optional<String> kind, long max, Visit visit)
            throws IOException, InterruptedException, TimeoutException {
        return walk(channel, kind, max, Long.MAX_VALUE, visit);
    }

    /** As {@link #walk(Channel, Optional, long, Visit)}, taking at most {@code scan} letters. */
    private long walk(Channel channel, Optional<String> kind, long max, long scan, Visit visit)
            throws IOException, InterruptedException, TimeoutException {
        long bound = Math.min(scan, channel.queueDeclarePassive(deadLetterQueue).getMessageCount());
        long counted = 0;
        for (long i = 0; i < bound && counted < max; i++) {
            GetResponse letter = channel.basicGet(deadLetterQueue, false);
            if (letter == null) {
                break;
            }
            if (kind.isPresent() && !kind.get().equals(kindOf(letter.getProps()))) {
                continue;   // not asked for: handed back when the channel closes
            }
            if (visit.visit(letter)) {
                counted++;
            }
        }
        return counted;
    }

    /** How a letter is sent on: its properties, or empty to leave it where it is. */
    private interface Forward {
        Optional<AMQP.BasicProperties> properties(GetResponse letter);
    }

    /**
     * A visit that publishes the letter to {@code queue} with confirms, and acks it only once the broker
     * confirmed and routed the copy: a failure leaves it in the dead-letter queue.
     */
    private static Visit confirming(Channel channel, String queue, Forward forward) throws IOException {
        channel.queueDeclarePassive(queue);   // a missing target fails here, before any letter moves
        channel.confirmSelect();
        AtomicBoolean returned = new AtomicBoolean();
        channel.addReturnListener(r -> returned.set(true));   // unroutable: confirmed, yet delivered nowhere
        return letter -> {
            Optional<AMQP.BasicProperties> properties = forward.properties(letter);
            if (properties.isEmpty()) {
                return false;
            }
            channel.basicPublish("", queue, true, properties.get(), letter.getBody());
            channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT.toMillis());
            if (returned.get()) {   // the letter stays: closing the channel hands it back
                throw new IOException("the broker could not route a letter to '" + queue + "'");
            }
            channel.basicAck(letter.getEnvelope().getDeliveryTag(), false);
            return true;
        };
    }

    private void requireQueue(String queue, String otherwise) {
        if (QueueTopology.lookup(connectionFactory, queue).isEmpty()) {
            throw new InvalidConfigurationException(otherwise);
        }
    }

    /**
     * The earliest time a letter is known to have been dead-lettered: orderless's own header and each
     * {@code time} of RabbitMQ's {@code x-death}, each unless it is after {@code now} (a producer can set any
     * header, and RabbitMQ keeps an {@code x-death} a client set: a date ahead would make the letter look young). Every time it takes is at or before the real
     * first dead-lettering, so a letter never looks younger than it is; empty when none is known.
     */
    static Optional<Instant> firstDeadLettered(AMQP.BasicProperties props, Instant now) {
        List<Instant> known = new ArrayList<>();
        field(props, DeadLetterFields.DEAD_LETTERED_AT).flatMap(DeadLetterQueue::instant)
                .filter(at -> !at.isAfter(now)).ifPresent(known::add);
        Object deaths = props.getHeaders() == null ? null : props.getHeaders().get(X_DEATH);
        if (deaths instanceof List<?> list) {
            for (Object death : list) {
                // RabbitMQ keeps an x-death a client set (3.13.3 and later): a time ahead is not trusted either
                if (death instanceof Map<?, ?> entry && entry.get("time") instanceof java.util.Date time
                        && !time.toInstant().isAfter(now)) {
                    known.add(time.toInstant());
                }
            }
        }
        return known.stream().min(Instant::compareTo);
    }

    private static AMQP.BasicProperties replayed(AMQP.BasicProperties props) {
        Map<String, Object> headers = props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
        // a replayed message fails afresh or not at all: a reason it carried would be taken for its next one
        // and the id of the dead-lettering it came from: the broker dead-lettering it again must not look like it
        for (String field : new String[] {DeadLetterFields.REASON, DeadLetterFields.REASON_KIND,
                DeadLetterFields.EXCEPTION_MESSAGE, DeadLetterFields.ENTITY, DeadLetterFields.SEQ,
                DeadLetterFields.LETTER_ID}) {
            headers.remove(field);
            headers.remove(DeadLetterFields.annotation(field));
        }
        Object count = headers.get(DeadLetterFields.REPLAY_COUNT);
        headers.put(DeadLetterFields.REPLAY_COUNT, count instanceof Number n ? n.intValue() + 1 : 1);
        return props.builder().headers(headers).deliveryMode(2).build();
    }

    /** What RabbitMQ's x-death says of a letter it dead-lettered itself: why, and from which queue. */
    private static String brokerReason(AMQP.BasicProperties props) {
        Object deaths = props.getHeaders() == null ? null : props.getHeaders().get(X_DEATH);
        if (deaths instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Map<?, ?> last) {
            return "dead-lettered by RabbitMQ: " + last.get("reason") + " from queue '" + last.get("queue") + "'";
        }
        return "(no reason)";
    }

    private static String kindOf(AMQP.BasicProperties props) {
        return field(props, DeadLetterFields.REASON_KIND).orElse(UNKNOWN_KIND);
    }

    /**
     * What a letter says of {@code header}: the header of that name (the AMQP 0-9-1 consumer's republish) or its
     * annotation (the AMQP 1.0 consumer's, which an AMQP 0-9-1 reader sees as a header too).
     */
    private static Optional<String> field(AMQP.BasicProperties props, String header) {
        return header(props, header).or(() -> header(props, DeadLetterFields.annotation(header)));
    }

    private static Optional<String> header(AMQP.BasicProperties props, String name) {
        Object value = props.getHeaders() == null ? null : props.getHeaders().get(name);
        return value == null ? Optional.empty() : Optional.of(value.toString());
    }

    private static Optional<Long> whole(String text) {
        try {
            return Optional.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static Optional<Instant> instant(String text) {
        try {
            return Optional.of(Instant.parse(text));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private interface OnChannel<T> {
        T run(Channel channel) throws IOException, InterruptedException, TimeoutException;
    }

    /**
     * Runs {@code work} on a channel of its own on the raw connection, never a cached one: closing it must
     * really close it, so that every letter taken and not acked goes back to the queue.
     */
    private <T> T onChannel(OnChannel<T> work) {
        requireQueue(deadLetterQueue, "dead-letter queue '" + deadLetterQueue + "' does not exist (yet): a consumer"
                + " declares it when it starts (QueueTopology.declare); check the queue name");
        try (Connection connection = connectionFactory.createConnection();
             Channel channel = connection.getDelegate().createChannel()) {
            return work.run(channel);
        } catch (org.springframework.amqp.AmqpException e) {
            throw dev.orderless.broker.internal.BrokerRefusals.named(connectionFactory,
                    "reading the dead-letter queue '" + deadLetterQueue + "'", e);
        } catch (IOException | TimeoutException e) {
            throw new TransientException("dead-letter queue '" + deadLetterQueue + "': " + e, e, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientException("dead-letter queue '" + deadLetterQueue + "': interrupted", e, false);
        }
    }
}
