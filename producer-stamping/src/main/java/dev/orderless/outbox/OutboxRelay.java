package dev.orderless.outbox;

import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.apply.MongoErrors;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublishFailedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes what an {@link Outbox} recorded, and removes each entry only once the broker confirmed it.
 * Run any number, in any processes: seqs make a duplicate harmless and order irrelevant, so relays need
 * no leader; claims only keep them from publishing the same entries at once.
 *
 * <ol>
 *   <li>Wait until the change stream reports an insert ({@link NewEntries}), or the sweep interval passes,
 *       or (after a full batch) not at all.
 *   <li>Claim up to {@link RelayOptions#batch()} due entries: a claim makes them not due for
 *       {@link RelayOptions#claimTtl()}, so a relay that dies leaves them to the others after that.
 *   <li>Publish them with confirms and mandatory routing ({@link ConfirmingPublisher}); remove those the
 *       broker confirmed. Any it did not take are released, due again after the back-off.
 *   <li>On a failure (broker down, unroutable, blocked; MongoDB down) back off, doubling from
 *       {@link RelayOptions#minBackoff()} to {@link RelayOptions#maxBackoff()}, with the state
 *       {@link State#BACKING_OFF} and the reason in {@link #problem()}, one WARN line when it starts and
 *       one INFO line when it ends.
 * </ol>
 * An entry no relay can ever publish (a body that is not a valid operation, written by hand) is parked:
 * kept with its reason, never due, logged at ERROR and counted ({@code orderless.outbox.parked}).
 * A crash between the confirm and the removal publishes the entry again: a duplicate, never a loss.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);

    /** What the relay is doing. */
    public enum State { RUNNING, BACKING_OFF, STOPPED }

    private final OutboxStore store;
    private final ConfirmingPublisher publisher;
    private final RelayOptions options;
    private final RelayMetrics metrics;
    private final Envelope envelope = new Envelope();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Object wake = new Object();
    private final AtomicLong rounds = new AtomicLong();
    private final Thread loop;
    private final Thread watcher;
    private boolean woken = true;
    private volatile State state = State.RUNNING;
    private volatile Optional<String> problem = Optional.empty();
    private Instant troubleSince = Instant.MIN;
    private Duration backoff;

    private OutboxRelay(OutboxStore store, ConfirmingPublisher publisher, RelayOptions options) {
        this.store = store;
        this.publisher = publisher;
        this.options = options;
        this.backoff = options.minBackoff();
        this.metrics = new RelayMetrics(store, options);
        this.loop = new Thread(this::run, "orderless-outbox-relay-" + store.name());
        this.watcher = new Thread(new NewEntries(store.collection(), this::wake, stopped, options.sweepInterval(),
                store.name()), "orderless-outbox-watch-" + store.name());
    }

    /** Starts a relay publishing the entries of {@code entries} through {@code publisher}. */
    public static OutboxRelay start(MongoCollection<BsonDocument> entries, ConfirmingPublisher publisher,
                                    RelayOptions options) {
        if (entries == null || publisher == null || options == null) {
            throw new InvalidConfigurationException("outbox relay: entries, publisher and options are required");
        }
        if (options.batch() > publisher.options().window()) {
            // one confirm window per batch: the publisher's failure then names every entry it did not confirm
            throw new InvalidConfigurationException("outbox relay: batch (" + options.batch() + ") must not exceed the"
                    + " publisher's window (" + publisher.options().window() + ")");
        }
        OutboxRelay relay = new OutboxRelay(new OutboxStore(entries), publisher, options);
        relay.watcher.setDaemon(true);
        relay.watcher.start();
        relay.loop.start();
        log.info("outbox relay '{}' ({}) started: batches of {}, claims of {} ms", relay.store.name(), options.owner(),
                options.batch(), options.claimTtl().toMillis());
        return relay;
    }

    public State state() {
        return state;
    }

    /** Why the relay is backing off, while it is. */
    public Optional<String> problem() {
        return problem;
    }

    /** Entries waiting, as the relay last counted them (at most once a second). */
    public long backlog() {
        return metrics.backlog();
    }

    /** How long the oldest waiting entry has waited, as last measured; empty when none waits. */
    public Optional<Duration> oldest() {
        return metrics.oldest();
    }

    /** Entries this relay published and removed. */
    public long published() {
        return metrics.published();
    }

    private void wake() {
        synchronized (wake) {
            woken = true;
            wake.notifyAll();
        }
    }

    private void run() {
        while (stopped.getCount() > 0) {
            boolean more;
            try {
                metrics.refresh();
                Instant now = options.clock().instant();
                String token = options.owner() + ":" + rounds.incrementAndGet();
                List<BsonDocument> batch = store.claim(token, options.batch(), now, now.plus(options.claimTtl()));
                more = batch.size() == options.batch();
                if (!batch.isEmpty() && !publish(batch, token)) {
                    pause(backoff());
                    continue;
                }
            } catch (OrderlessException | com.mongodb.MongoException e) {
                trouble("MongoDB: " + MongoErrors.translate("outbox '" + store.name() + "'", e).getMessage());
                pause(backoff());
                continue;
            } catch (RuntimeException e) {
                trouble("unexpected " + e);
                log.error("outbox relay '{}': unexpected failure, backing off", store.name(), e);
                pause(backoff());
                continue;
            }
            recovered();
            if (!more) {
                awaitWork();
            }
        }
        state = State.STOPPED;
    }

    /** Publishes one claimed batch; true if the broker took all of it. */
    private boolean publish(List<BsonDocument> batch, String token) {
        List<Operation> ops = new ArrayList<>(batch.size());
        Map<Operation, List<BsonValue>> ids = new HashMap<>();
        for (BsonDocument entry : batch) {
            BsonValue id = entry.get(OutboxStore.ID);
            try {
                Operation op = envelope.decode(entry.getBinary(OutboxStore.BODY).getData());
                ops.add(op);
                ids.computeIfAbsent(op, k -> new ArrayList<>()).add(id);
            } catch (RuntimeException e) {
                String reason = "not an operation: " + e.getMessage();
                store.park(id, reason);
                metrics.parked();
                log.error("outbox '{}': entry {} ({} seq {}) can never be published, parked: {}", store.name(), id,
                        entry.get(OutboxStore.ENTITY), entry.get(OutboxStore.SEQ), reason);
            }
        }
        if (ops.isEmpty()) {
            return true;
        }
        try {
            publisher.publishAll(ops);
            store.remove(all(ids, ops));
            metrics.published(ops.size());
            return true;
        } catch (PublishFailedException e) {
            // nothing is removed unless confirmed; a failure naming nothing names everything
            Set<Operation> failed = e.failed().isEmpty() ? new HashSet<>(ops) : new HashSet<>(e.failed());
            List<Operation> confirmed = ops.stream().filter(op -> !failed.contains(op)).toList();
            store.remove(all(ids, confirmed));
            metrics.published(confirmed.size());
            store.release(all(ids, List.copyOf(failed)), token, options.clock().instant().plus(backoff));
            trouble("RabbitMQ did not take " + failed.size() + " of " + ops.size() + " entries: " + e.getMessage());
            return false;
        }
    }

    private static List<BsonValue> all(Map<Operation, List<BsonValue>> ids, List<Operation> ops) {
        List<BsonValue> all = new ArrayList<>();
        ops.forEach(op -> all.addAll(ids.getOrDefault(op, List.of())));
        return all;
    }

    private void trouble(String reason) {
        metrics.failed();
        if (state != State.BACKING_OFF) {
            troubleSince = Instant.now();
            log.warn("outbox relay '{}': {}; backing off (up to {} ms between attempts), entries stay in the outbox",
                    store.name(), reason, options.maxBackoff().toMillis());
        }
        problem = Optional.of(reason);
        state = State.BACKING_OFF;
    }

    private void recovered() {
        if (state == State.BACKING_OFF) {
            log.info("outbox relay '{}': publishing again after {} s of failures", store.name(),
                    Duration.between(troubleSince, Instant.now()).toSeconds());
        }
        problem = Optional.empty();
        state = State.RUNNING;
        backoff = options.minBackoff();
    }

    private Duration backoff() {
        Duration current = backoff;
        Duration doubled = backoff.multipliedBy(2);
        backoff = doubled.compareTo(options.maxBackoff()) > 0 ? options.maxBackoff() : doubled;
        return current;
    }

    private void awaitWork() {
        long deadline = System.nanoTime() + options.sweepInterval().toNanos();
        synchronized (wake) {
            try {
                while (!woken && stopped.getCount() > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    TimeUnit.NANOSECONDS.timedWait(wake, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopped.countDown();
            }
            woken = false;
        }
    }

    private void pause(Duration duration) {
        try {
            stopped.await(duration.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped.countDown();
        }
    }

    /** Stops after the batch in hand (its confirms are awaited, bounded by the publisher's timeouts). */
    @Override
    public void close() {
        stopped.countDown();
        wake();
        join(loop);
        join(watcher);
        metrics.close();
        log.info("outbox relay '{}' ({}) stopped", store.name(), options.owner());
    }

    private static void join(Thread thread) {
        try {
            thread.join(Duration.ofMinutes(2).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
