package dev.orderless.outbox;

import com.mongodb.client.MongoCollection;
import dev.orderless.InvalidConfigurationException;
import dev.orderless.OrderlessException;
import dev.orderless.apply.Operation;
import dev.orderless.internal.MongoErrors;
import dev.orderless.message.Envelope;
import dev.orderless.publish.ConfirmingPublisher;
import dev.orderless.publish.PublishFailedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes what an {@link Outbox} recorded, and removes each entry only once the broker confirmed it.
 * Run any number, in any processes: seqs make a duplicate harmless and order irrelevant, so relays need
 * no leader; claims only keep them from publishing the same entries at once.
 *
 * <ol>
 *   <li>Wait until the change stream reports an insert, or the sweep interval passes,
 *       or (after a full batch) not at all.
 *   <li>Claim up to {@link RelayOptions#batch()} due entries under a token no other relay (in this process
 *       or another) uses: a claim makes them not due for {@link RelayOptions#claimTtl()}, so a relay that
 *       dies leaves them to the others after that. A claim that failed, or landed with its reply lost (a
 *       connection closed, an election), is handed back at once, or before the next claim if MongoDB refuses
 *       that too: a relay that lives never leaves its entries waiting out a claim.
 *   <li>Publish them with confirms and mandatory routing ({@link ConfirmingPublisher}); remove those the
 *       broker confirmed. Any it did not take are released, due again after the back-off.
 *   <li>An entry whose own message could not be sent (the publisher refused it before it reached the
 *       broker: {@link PublishFailedException#refused()}) is given back with why. It counts as a refusal
 *       of the entry only when other entries went through since its last refusal, so a fault that stops
 *       every message (a broken tracing handler) parks nothing; at {@link RelayOptions#parkAfter()} refusals
 *       it is parked. Nacks, returns and missing confirms are the broker's state, never the entry's.
 *   <li>On a failure (broker down, unroutable, blocked; MongoDB down) back off by
 *       {@link RelayOptions#backoff()} (doubling, with jitter, up to its max), with the state
 *       {@link State#BACKING_OFF} and the reason in {@link #problem()}, one WARN line when it starts and
 *       one INFO line when it ends.
 *   <li>Anything else that ends the loop (an {@link Error}: a library version clash, out of memory) ends
 *       it as {@link State#FAILED}, with the reason in {@link #problem()} and an ERROR line; its claim is
 *       handed back so other relays take the entries at once. The relay never ends while saying it runs.
 * </ol>
 * Parked entries (kept with their reason, never due, logged at ERROR, counted in
 * {@code orderless.outbox.parked} and shown by {@code orderless.outbox.parked.now}) wait for an operator:
 * {@link Outbox#parked()}. Entries that are not operations at all (written by hand) are parked at once.
 * A crash between the confirm and the removal publishes the entry again: a duplicate, never a loss.
 */
public final class OutboxRelay implements AutoCloseable {
    // This class runs the loop; its decisions are plain classes: BatchOutcome (what became of a batch and what comes
    // next), RefusalRule (when a refused entry is parked), RelayStatus (the state reported and the back-off),
    // ClaimTokens (a token no other relay uses), with OutboxStore for the stored entries and NewEntries for the
    // wake-ups. (Not in the Javadoc: they are package-private, and a reader of the API would see bare names.)
    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);

    /** What the relay is doing. */
    public enum State {
        /** Publishing, or waiting for entries to be due. */
        RUNNING,
        /** A failure (broker or MongoDB down, unroutable, blocked) lasts: it pauses, then tries again. */
        BACKING_OFF,
        /** Its loop ended on something it cannot go on after ({@link OutboxRelay#problem()} says what); it publishes nothing. */
        FAILED,
        /** Closed. */
        STOPPED
    }

    private final OutboxStore store;
    private final ConfirmingPublisher publisher;
    private final RelayOptions options;
    private final RelayMetrics metrics;
    private final Envelope envelope = new Envelope();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Object wake = new Object();
    private final ClaimTokens tokens;
    private final Thread loop;
    private final Thread watcher;
    private boolean woken = true;
    private final RelayStatus status;
    private final RefusalRule refusals;
    /** When this relay last had an entry confirmed: the evidence that a refused entry is at fault itself. */
    private Instant lastConfirmed = Instant.MIN;
    /** The claim in hand (from before its update is sent), handed back if the loop ends unexpectedly. */
    private Optional<Held> held = Optional.empty();
    /**
     * Claims whose hand-back failed (MongoDB still away, or its connection pool paused after the error that ended
     * the round): tried again before every claim until they land or their claim expires.
     */
    private final List<Held> owed = new ArrayList<>();

    private record Held(String token, List<BsonValue> ids, Instant until) {
    }

    private OutboxRelay(OutboxStore store, ConfirmingPublisher publisher, RelayOptions options) {
        this.store = store;
        this.publisher = publisher;
        this.options = options;
        this.status = new RelayStatus(options.backoff());
        this.refusals = new RefusalRule(options.parkAfter());
        this.tokens = new ClaimTokens(options.owner());
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

    /**
     * What it is doing now, as its loop last set it.
     *
     * @return its state; {@link #problem()} says why while {@link State#BACKING_OFF} or {@link State#FAILED}
     */
    public State state() {
        return status.state();
    }

    /** Why the relay is backing off, or why it failed. */
    public Optional<String> problem() {
        return status.problem();
    }

    /** Entries waiting (parked ones are not waiting), as the relay last counted them (at most once a second). */
    public long backlog() {
        return metrics.backlog();
    }

    /** How long the oldest waiting entry has waited, as last measured; empty when none waits. */
    public Optional<Duration> oldest() {
        return metrics.oldest();
    }

    /** Entries parked, as the relay last counted them (at most once a second). */
    public long parked() {
        return metrics.parkedNow();
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
        try {
            loop();
            status.stopped();
        } catch (Throwable e) {   // never end the thread while saying it runs
            fail(e);
        }
    }

    private void loop() {
        while (stopped.getCount() > 0) {
            boolean more;
            try {
                metrics.refresh();
                handBackOwed();
                Instant now = options.clock().instant();
                String token = tokens.next();
                Instant until = now.plus(options.claimTtl());
                List<BsonDocument> due = store.due(options.batch(), now);
                // held before the claim is sent: a claim that lands with its reply lost (a connection closed, an
                // election) is handed back all the same, not left to expire with no relay on its entries
                held = Optional.of(new Held(token, ids(due), until));
                List<BsonDocument> batch = store.claim(due, token, now, until);
                held = Optional.of(new Held(token, ids(batch), until));
                more = batch.size() == options.batch();
                boolean took = batch.isEmpty() || publish(batch, token);
                held = Optional.empty();
                if (!took) {
                    pause(status.pause());
                    continue;
                }
            } catch (OrderlessException | com.mongodb.MongoException e) {
                handBack();
                trouble("MongoDB: " + MongoErrors.translate("outbox '" + store.name() + "'", e).getMessage());
                pause(status.pause());
                continue;
            } catch (RuntimeException e) {
                handBack();
                if (status.state() != State.BACKING_OFF) {
                    log.debug("outbox relay '{}': unexpected failure", store.name(), e);
                }
                trouble("unexpected " + e);
                pause(status.pause());
                continue;
            }
            status.recovered(Instant.now()).ifPresent(after -> log.info(
                    "outbox relay '{}': publishing again after {} s of failures", store.name(), after.toSeconds()));
            if (!more) {
                awaitWork();
            }
        }
    }

    /** Publishes one claimed batch; false if the broker did not take some of it, or could not be told apart. */
    private boolean publish(List<BsonDocument> batch, String token) {
        List<Operation> ops = new ArrayList<>(batch.size());
        Map<Operation, List<BsonDocument>> entries = new HashMap<>();
        for (BsonDocument entry : batch) {
            try {
                Operation op = envelope.decode(entry.getBinary(OutboxStore.BODY).getData());
                ops.add(op);
                entries.computeIfAbsent(op, k -> new ArrayList<>()).add(entry);
            } catch (RuntimeException e) {
                park(entry, "not an operation: " + e.getMessage());
            }
        }
        if (ops.isEmpty()) {
            return true;
        }
        BatchOutcome outcome = publishClaimed(ops);
        store.remove(ids(entries, outcome.confirmed()));
        metrics.published(outcome.confirmed().size());
        Instant now = options.clock().instant();
        if (outcome.someConfirmed()) {
            lastConfirmed = now;
        }
        outcome.refused().forEach((op, reason) -> entries.getOrDefault(op, List.of()).forEach(entry ->
                refuse(entry, token, reason, now, outcome.someConfirmed())));
        switch (outcome.next()) {
            case BACK_OFF_NOT_TAKEN -> {
                // released before the failure is recorded: if MongoDB fails the release, that is the one failure
                store.release(ids(entries, outcome.notTaken()), token, now.plus(status.nextPause()));
                trouble("RabbitMQ did not take " + outcome.notTaken().size() + " of " + ops.size() + " entries: "
                        + outcome.why());
                return false;
            }
            case BACK_OFF_NONE_WENT_THROUGH -> {
                trouble(outcome.refused().size() + " entries could not be sent, and none went through: "
                        + outcome.refused().values().iterator().next());
                return false;
            }
            default -> {
                return true;
            }
        }
    }

    private BatchOutcome publishClaimed(List<Operation> ops) {
        try {
            publisher.publishAll(ops);
            return BatchOutcome.allConfirmed(ops);
        } catch (PublishFailedException e) {
            return BatchOutcome.of(ops, e);
        }
    }

    /**
     * Gives back an entry whose own message could not be sent; parks it once that happened
     * {@link RelayOptions#parkAfter()} times with other entries going through in between.
     */
    private void refuse(BsonDocument entry, String token, String reason, Instant now, boolean othersWentThrough) {
        Optional<Instant> refusedBefore = Optional.ofNullable(entry.getDateTime(OutboxStore.REFUSED_AT, null))
                .map(d -> Instant.ofEpochMilli(d.getValue()));
        boolean counts = RefusalRule.counts(othersWentThrough, refusedBefore, lastConfirmed);
        int before = entry.getNumber(OutboxStore.REFUSALS, new BsonInt32(0)).intValue();
        Duration delay = options.backoff().pause(before + 1);
        Optional<Integer> counted = store.refused(entry.get(OutboxStore.ID), token, reason, counts, now, now.plus(delay));
        metrics.refused();
        if (counted.isEmpty()) {
            return;   // another relay claimed it meanwhile
        }
        if (refusals.parks(counted.get())) {
            park(entry, "its message could not be sent " + counted.get() + " times while other entries went"
                    + " through; last: " + reason);
        } else if (RefusalRule.worthAWarning(refusedBefore, counts)) {
            log.warn("outbox '{}': entry {} could not be sent: {}; refusal {} of {} before it is parked",
                    store.name(), describe(entry), reason, counted.get(), options.parkAfter());
        }
    }

    private void park(BsonDocument entry, String reason) {
        BsonValue id = entry.get(OutboxStore.ID);
        store.park(id, reason, options.clock().instant());
        metrics.parked();
        log.error("outbox '{}': entry {} parked, no relay publishes it until it is retried: {}", store.name(),
                describe(entry), reason);
    }

    /** An entry as an operator finds it again: its id, entity and seq. */
    private static String describe(BsonDocument entry) {
        BsonValue id = entry.get(OutboxStore.ID);
        BsonValue entity = entry.get(OutboxStore.ENTITY, new org.bson.BsonString("?"));
        BsonValue seq = entry.get(OutboxStore.SEQ, new org.bson.BsonString("?"));
        return (id.isObjectId() ? id.asObjectId().getValue().toHexString() : String.valueOf(id)) + " ('"
                + (entity.isString() ? entity.asString().getValue() : entity) + "' seq "
                + (seq.isNumber() ? String.valueOf(seq.asNumber().longValue()) : String.valueOf(seq)) + ")";
    }

    private static List<BsonValue> ids(List<BsonDocument> entries) {
        return entries.stream().map(d -> d.get(OutboxStore.ID)).toList();
    }

    private static List<BsonValue> ids(Map<Operation, List<BsonDocument>> entries, List<Operation> ops) {
        List<BsonValue> all = new ArrayList<>();
        ops.forEach(op -> entries.getOrDefault(op, List.of()).forEach(entry -> all.add(entry.get(OutboxStore.ID))));
        return all;
    }

    /**
     * Hands the claim in hand back, due now, so that no relay (this one included) waits for it to expire; if that
     * fails too, it is owed, and handed back before the next claim ({@link #handBackOwed()}).
     */
    private void handBack() {
        Optional<Held> claim = held;
        held = Optional.empty();
        claim.filter(h -> !h.ids().isEmpty()).ifPresent(h -> {
            try {
                store.release(h.ids(), h.token(), options.clock().instant());
            } catch (RuntimeException e) {
                log.debug("outbox relay '{}': handing back its claim: {}; again before the next claim", store.name(),
                        e.toString());
                owed.add(h);
            }
        });
    }

    /**
     * Hands back the claims whose hand-back failed, those not expired yet (an expired one is due again anyway).
     * Throws what MongoDB throws: the round then backs off as for any failure, and they stay owed.
     */
    private void handBackOwed() {
        Instant now = options.clock().instant();
        owed.removeIf(h -> !h.until().isAfter(now));
        while (!owed.isEmpty()) {
            Held h = owed.get(0);
            store.release(h.ids(), h.token(), now);   // only what this token still holds: harmless if taken since
            owed.remove(0);
        }
    }

    /** The end of the loop on something it cannot go on from: FAILED, why, an ERROR line, its claim handed back. */
    private void fail(Throwable e) {
        String reason = "stopped on an unexpected " + e.getClass().getName() + ": " + e.getMessage();
        try {
            metrics.failed();
            handBack();   // before FAILED shows: whoever sees FAILED finds the entries free for other relays
        } catch (Throwable ignored) {
            // out of memory, say: the state below is what must be seen
        }
        status.failed(reason);
        log.error("outbox relay '{}' ({}) {}; its entries stay in the outbox for other relays: fix the cause and"
                + " start it again", store.name(), options.owner(), reason);
        log.debug("outbox relay '{}' failure", store.name(), e);
    }

    private void trouble(String reason) {
        metrics.failed();
        if (status.trouble(reason, Instant.now())) {
            log.warn("outbox relay '{}': {}; backing off (up to {} ms between attempts), entries stay in the outbox",
                    store.name(), reason, options.backoff().max().toMillis());
        }
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
        status.stopped();
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
