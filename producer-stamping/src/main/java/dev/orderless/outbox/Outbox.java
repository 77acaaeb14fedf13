package dev.orderless.outbox;

import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.InvalidInputException;
import dev.orderless.apply.Operation;
import dev.orderless.internal.MongoErrors;
import dev.orderless.message.Envelope;
import dev.orderless.stamp.Stamper;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.LongFunction;
import org.bson.BsonDocument;

/**
 * Records actions durably in MongoDB, for an {@link OutboxRelay} to publish: what a web application calls
 * instead of publishing, so that a request never waits for RabbitMQ, and an action recorded is never lost
 * whatever the broker does.
 *
 * <pre>
 * Operation op = outbox.record("student-17", seq -&gt; Operation.add("student-17", seq, "classes", "CS 101"));
 * </pre>
 *
 * <ol>
 *   <li>Refuse with {@link dev.orderless.InvalidInputException} an entity id no operation may have (over
 *       {@value Operation#MAX_KEY_LENGTH} characters), and with {@link OutboxFullException} if
 *       {@link OutboxOptions#maxBacklog()} entries wait (counted once per {@link OutboxOptions#backlogCheck()},
 *       not per record; parked entries do not wait, so they do not count).
 *   <li>Stamp the next seq for the entity ({@link Stamper}: one round trip for the counter stamper, none for
 *       the hybrid logical clock) and build the operation with it.
 *   <li>Refuse with {@link dev.orderless.InvalidInputException} an operation whose message is larger than
 *       {@link OutboxOptions#maxMessageBytes()} (the consumers would dead-letter it unread).
 *   <li>Insert the entry, with majority write concern: one round trip. When {@code record} returns, the
 *       action survives a crash of this process, of the broker and a MongoDB failover.
 * </ol>
 * Every entry {@code record} accepts can be published: its message-id is a fixed-length hash, not the
 * entity, and its body is within the limit. An entry that still cannot be sent (a header a tracing
 * handler adds, say) is parked by the relays with why; see {@link #parked()}.
 *
 * <p>Why stamp and insert are two writes, not one atomic write to the counter document: a seq stamped and
 * never inserted (a crash between the two, or a failed insert) is a gap in the entity's seqs, which is
 * harmless, and the caller saw the failure (or died), so the action was never acknowledged. Nothing needs
 * them atomic. Entries in the counter document would make every entity's counter grow with its backlog
 * (16 MB), make relays write to the documents every stamp contends on, and need an optimistic
 * compare-and-set loop to put the stamped seq inside the operation (no pipeline updates everywhere). A
 * collection of its own costs the second round trip and buys simple relays: claim, publish, delete.
 */
public final class Outbox {
    private final OutboxStore store;
    private final Stamper stamper;
    private final OutboxOptions options;
    private final Envelope envelope = new Envelope();
    private final Counter recorded;
    private final Counter refused;
    private final Object countLock = new Object();
    private final ParkedEntries parked;
    private long counted;
    private Optional<Instant> oldestAt = Optional.empty();
    private long agedAt;
    private boolean everAged;
    private long sinceCount;
    private long countedAt;
    private boolean everCounted;

    private Outbox(OutboxStore store, Stamper stamper, OutboxOptions options) {
        this.store = store;
        this.stamper = stamper;
        this.options = options;
        this.parked = new ParkedEntries(store, options.clock());
        this.recorded = Counter.builder("orderless.outbox.recorded").tag("outbox", store.name())
                .description("actions recorded in the outbox").register(options.meters());
        this.refused = Counter.builder("orderless.outbox.refused").tag("outbox", store.name())
                .description("actions refused because the outbox was full").register(options.meters());
    }

    /**
     * An outbox in {@code entries} (a collection of its own, e.g. {@code orderless_outbox}), stamping with
     * {@code stamper}. Creates the index the relays need.
     */
    public static Outbox create(MongoCollection<BsonDocument> entries, Stamper stamper, OutboxOptions options) {
        if (entries == null || stamper == null || options == null) {
            throw new InvalidConfigurationException("outbox: entries, stamper and options are required");
        }
        OutboxStore store = new OutboxStore(entries);
        try {
            store.ensureIndex();
        } catch (RuntimeException e) {
            throw MongoErrors.translate("outbox '" + store.name() + "': creating its index", e);
        }
        return new Outbox(store, stamper, options);
    }

    /**
     * Stamps the next seq for {@code entity}, builds the operation with it and stores it for the relays.
     *
     * @return the operation as recorded
     * @throws OutboxFullException if the outbox is at its limit (nothing was stamped or stored)
     * @throws dev.orderless.TransientException if MongoDB did not take it (the action is not recorded)
     */
    public Operation record(String entity, LongFunction<? extends Operation> at) {
        if (entity == null || entity.isEmpty() || at == null) {
            throw new IllegalArgumentException("record: entity must not be empty and the operation builder not null");
        }
        if (entity.length() > Operation.MAX_KEY_LENGTH) {
            throw new InvalidInputException("outbox '" + store.name() + "': the entity id is " + entity.length()
                    + " characters, more than the " + Operation.MAX_KEY_LENGTH + " an operation may have; nothing was"
                    + " stamped or recorded");
        }
        refuseIfFull(entity);
        long seq = stamper.next(entity);
        Operation op = at.apply(seq);
        if (op == null || !op.entity().equals(entity) || op.seq() != seq) {
            throw new IllegalArgumentException("the operation must be for '" + entity + "' with the stamped seq " + seq
                    + ", was " + op);
        }
        byte[] body = envelope.encode(op);
        if (body.length > options.maxMessageBytes()) {
            throw new InvalidInputException("outbox '" + store.name() + "': the message for '" + entity + "' seq " + seq
                    + " is " + body.length + " bytes, more than maxMessageBytes (" + options.maxMessageBytes() + ", the"
                    + " consumers' limit by default); it was not recorded (its seq is a harmless gap)");
        }
        try {
            store.insert(op, body, options.clock().instant());
        } catch (RuntimeException e) {
            throw MongoErrors.translate("outbox '" + store.name() + "': record " + op, e);
        }
        synchronized (countLock) {
            sinceCount++;
        }
        recorded.increment();
        return op;
    }

    /**
     * The entries waiting (parked ones are not waiting), as last counted plus those recorded here since
     * (counting again if due).
     */
    public long backlog() {
        synchronized (countLock) {
            countIfDue();
            return counted + sinceCount;
        }
    }

    /**
     * How long the oldest waiting entry has waited, as last measured (at most once per
     * {@link OutboxOptions#backlogCheck()}); empty when none waits. Keep it well below the tombstone grace
     * of the consumers' collection: an action that waits longer may arrive beyond the horizon.
     */
    public Optional<Duration> oldest() {
        synchronized (countLock) {
            long now = System.nanoTime();
            if (!everAged || now - agedAt >= options.backlogCheck().toNanos()) {
                try {
                    oldestAt = store.oldest();
                } catch (RuntimeException e) {
                    throw MongoErrors.translate("outbox '" + store.name() + "': reading its oldest entry", e);
                }
                agedAt = now;
                everAged = true;
            }
            return oldestAt.map(at -> {
                Duration waited = Duration.between(at, options.clock().instant());
                return waited.isNegative() ? Duration.ZERO : waited;
            });
        }
    }

    /** The entries no relay publishes any more, to see, retry or drop. */
    public ParkedEntries parked() {
        return parked;
    }

    private void countIfDue() {
        long now = System.nanoTime();
        if (!everCounted || now - countedAt >= options.backlogCheck().toNanos()) {
            try {
                counted = store.backlog();
            } catch (RuntimeException e) {
                throw MongoErrors.translate("outbox '" + store.name() + "': counting its entries", e);
            }
            sinceCount = 0;
            countedAt = now;
            everCounted = true;
        }
    }

    /** The collection's name. */
    public String name() {
        return store.name();
    }

    private void refuseIfFull(String entity) {
        long backlog = backlog();
        if (backlog >= options.maxBacklog()) {
            refused.increment();
            throw new OutboxFullException("outbox '" + store.name() + "' is full (" + backlog + " entries waiting, limit "
                    + options.maxBacklog() + "): the action for '" + entity + "' was not recorded; the relays are not"
                    + " draining it: check that RabbitMQ is up and not blocking, and that a relay runs", backlog,
                    options.maxBacklog());
        }
    }
}
