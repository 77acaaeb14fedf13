package dev.orderless.kafka.internal;

import dev.orderless.apply.Operation;
import dev.orderless.consume.internal.ApplyingHandler;
import dev.orderless.consume.internal.BatchApplyingHandler;
import dev.orderless.consume.internal.Delivery;
import dev.orderless.consume.internal.Handling;
import dev.orderless.consume.internal.HoldClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.ShareConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the consumer's N: a share consumer of its own and a thread that polls, applies and acknowledges.
 *
 * <ol>
 *   <li>Poll up to {@code max.poll.records}. A record this worker holds (below) comes back in a later poll: it is
 *       tried again on its own; the others are applied together ({@link dev.orderless.consume.internal.BatchApplyingHandler}),
 *       each acknowledged on its own: ACCEPT after MongoDB acknowledged the write, the dead-letter topic then REJECT
 *       for poison.
 *   <li>Before the bulk write, which may block while MongoDB does not answer, the acknowledgements settled so far
 *       (the poison's REJECT) are sent, while their locks hold.
 *   <li>A record MongoDB could not take is tried once more on its own (unless the consumer already waits for MongoDB);
 *       failing again, it is held: RENEW keeps its acquisition lock (the broker's delivery count does not move, so an
 *       outage of any length loses nothing) and it comes back to this worker on a later poll, after a back-off no
 *       longer than half the lock. While MongoDB serves others, a record held past the max hold is dead-lettered as
 *       {@code held too long}.
 *   <li>While the consumer waits for MongoDB, no record is tried: one probe of MongoDB per poll, on a thread of its
 *       own and waited for at most a quarter of the lock, decides; until it answers, every record polled is renewed
 *       at once, so that no apply blocking on MongoDB outlasts a lock.
 *   <li>A record on its last delivery (its delivery count at the broker's limit) is never held nor released: the
 *       broker would archive it silently if this consumer died with it, so it goes to the dead-letter topic.
 *   <li>Whatever a batch leaves unsettled (a failure in the middle of it) is renewed before the next poll, which a
 *       share consumer refuses while records of the last one are unacknowledged.
 *   <li>Its thread catches what a poll throws, says so in an ERROR line naming the topic and polls again after a
 *       pause; if it ends anyway (an {@link Error}), it says so and {@link #alive()} turns false.
 * </ol>
 */
public final class ShareWorker {
    private static final Logger log = LoggerFactory.getLogger(ShareWorker.class);
    private static final Duration DEFAULT_LOCK = Duration.ofSeconds(30);
    private static final Duration MAX_ERROR_PAUSE = Duration.ofSeconds(5);

    /** A record held for another attempt, and when this worker last saw it. */
    private record Held(Operation op, HoldClock.Hold hold, long seenNanos) {
    }

    private record Key(int partition, long offset) {
    }

    private final ShareConsumer<byte[], byte[]> consumer;
    private final String topic;
    private final ApplyingHandler single;
    private final Handling handling;
    private final DeadLetterWriter deadLetters;
    private final int deliveryLimit;
    private final Duration pollTimeout;
    private final Thread thread;
    private final Map<Key, Held> held = new HashMap<>();
    private final java.util.concurrent.ExecutorService probes;
    private java.util.concurrent.Future<Boolean> probe;
    private int downPolls;
    private volatile boolean stopping;

    public ShareWorker(ShareConsumer<byte[], byte[]> consumer, String topic, int index, Handling handling,
                       DeadLetterWriter deadLetters, int deliveryLimit, Duration pollTimeout) {
        this.consumer = consumer;
        this.topic = topic;
        this.handling = handling;
        this.single = handling.single();
        this.deadLetters = deadLetters;
        this.deliveryLimit = deliveryLimit;
        this.pollTimeout = pollTimeout;
        this.thread = new Thread(this::run, "orderless-kafka-" + topic + "-" + index);
        this.probes = java.util.concurrent.Executors.newSingleThreadExecutor(task -> {
            Thread probing = new Thread(task, thread.getName() + "-mongodb-probe");
            probing.setDaemon(true);
            return probing;
        });
    }

    public void start() {
        // called on this worker's thread, from a poll or a commit: an acknowledgement the broker refused (its lock had
        // expired) means the record comes again, as a duplicate the guard absorbs; said, not left to be guessed
        consumer.setAcknowledgementCommitCallback((offsets, exception) -> {
            if (exception != null) {
                int records = offsets.values().stream().mapToInt(java.util.Set::size).sum();
                log.warn("Kafka share consumer {} of '{}': the broker refused the acknowledgement of {} records ({});"
                        + " they come again, as duplicates (keep the record lock above a poll's time)",
                        thread.getName(), topic, records, exception.toString());
            }
        });
        thread.start();
    }

    public String name() {
        return thread.getName();
    }

    /** Polling, or about to: its thread runs and was not told to stop. */
    public boolean alive() {
        return thread.isAlive() && !stopping;
    }

    /** Records it holds now for another attempt. */
    public int holding() {
        synchronized (held) {
            return held.size();
        }
    }

    /** Tells it to stop: a poll waiting returns at once. */
    public void signalStop() {
        stopping = true;
        consumer.wakeup();
    }

    /** Waits up to {@code millis} for its thread to end. */
    public void finish(long millis) {
        try {
            thread.join(Math.max(1, millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("Kafka share consumer {} did not stop within {} ms; its records go back to the group when its"
                    + " session ends", thread.getName(), millis);
        }
    }

    private void run() {
        int failures = 0;
        try {
            consumer.subscribe(List.of(topic));
            while (!stopping && !single.stopped()) {
                try {
                    boolean down = mongoDown();
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(pollTimeout);
                    int attempts = down ? keep(records) : handle(records);
                    forgetLost();
                    if (attempts > 0 && !stopping) {
                        consumer.commitSync(Duration.ofSeconds(5));   // the renewals go now, not with the next poll
                        single.pause(attempts, lock().dividedBy(2));
                    } else if (!records.isEmpty()) {
                        // the acknowledgements go now, while their locks hold, not with the next poll
                        consumer.commitAsync();
                    }
                    failures = 0;
                } catch (WakeupException e) {
                    // stopping: the loop condition ends it
                } catch (RuntimeException e) {
                    failures++;
                    log.error("Kafka share consumer {} of '{}': {}; polling again after a pause (failure {})",
                            thread.getName(), topic, e.toString(), failures);
                    single.pause(failures, MAX_ERROR_PAUSE);
                }
            }
        } catch (Throwable e) {
            log.error("Kafka share consumer {} of '{}' ended: {}; the consumer no longer reports running",
                    thread.getName(), topic, e.toString(), e);
            stopping = true;
            throw e;
        } finally {
            close();
        }
    }

    /**
     * While the consumer waits for MongoDB: whether it still does, by one probe waited for at most a quarter of the
     * lock (the probe goes on on its own thread; the next poll asks it again).
     */
    private boolean mongoDown() {
        if (!single.waiting()) {
            downPolls = 0;
            return false;
        }
        if (probe == null || probe.isDone()) {
            probe = probes.submit(single::answersWrites);
        }
        try {
            if (probe.get(lock().dividedBy(4).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                downPolls = 0;
                return false;
            }
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
            // not answered in time, or refused: still down
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /**
     * MongoDB is down: every record polled is renewed at once, none tried (a try would block on MongoDB).
     *
     * @return how many polls in a row found MongoDB down, for the pause before the next poll
     */
    private int keep(ConsumerRecords<byte[], byte[]> records) {
        downPolls++;
        long now = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            RecordDelivery delivery = new RecordDelivery(consumer, record, deadLetters, deliveryLimit);
            Key key = new Key(record.partition(), record.offset());
            synchronized (held) {
                Held before = held.get(key);
                if (before != null) {
                    held.put(key, new Held(before.op(), before.hold(), now));
                }
            }
            delivery.renew();
        }
        return downPolls;
    }

    /**
     * Applies and settles one poll's records.
     *
     * @return the most attempts of a record held now (0: none held), for the pause before the next poll
     */
    private int handle(ConsumerRecords<byte[], byte[]> records) {
        if (records.isEmpty()) {
            return 0;
        }
        List<RecordDelivery> all = new ArrayList<>();
        List<RecordDelivery> fresh = new ArrayList<>();
        int[] mostAttempts = {0};
        // every record is in `all` before any is tried: whatever a failure midway leaves is renewed below
        List<Held> back = new ArrayList<>();
        List<RecordDelivery> returned = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> record : records) {
            RecordDelivery delivery = new RecordDelivery(consumer, record, deadLetters, deliveryLimit);
            all.add(delivery);
            Held before;
            synchronized (held) {
                before = held.remove(new Key(record.partition(), record.offset()));
            }
            if (before == null) {
                fresh.add(delivery);
            } else {
                returned.add(delivery);
                back.add(before);
            }
        }
        try {
            for (int i = 0; i < returned.size(); i++) {
                attemptOrHold(returned.get(i), back.get(i).op(), back.get(i).hold(), mostAttempts);
            }
            handling.batch().handle(fresh, new BatchApplyingHandler.Holder() {
                @Override
                public void hold(Delivery delivery, Operation op) throws IOException {
                    // failed in the bulk write: held without another try now, which would block as long again if
                    // MongoDB went away; it comes back after a pause and is tried on its own then
                    HoldClock.Hold hold = single.hold();
                    single.heldWithoutAttempt(hold);
                    keepHeld((RecordDelivery) delivery, op, hold, mostAttempts);
                }

                @Override
                public void beforeApply() {
                    consumer.commitAsync();   // the poison's REJECT goes now, not after a bulk write that may block
                }
            });
        } catch (IOException | RuntimeException e) {
            log.error("Kafka share consumer {} of '{}': a poll of {} records failed midway ({}); what it did not settle"
                    + " is kept for the next poll", thread.getName(), topic, all.size(), e.toString(), e);
        } finally {
            for (RecordDelivery delivery : all) {
                if (!delivery.settled()) {
                    delivery.renew();   // a share consumer polls again only once every record is acknowledged
                }
                if (delivery.letterRefused()) {
                    mostAttempts[0] = Math.max(mostAttempts[0], 1);   // a pause before the letters are tried again
                }
            }
        }
        return mostAttempts[0];
    }

    private void attemptOrHold(RecordDelivery delivery, Operation op, HoldClock.Hold hold, int[] mostAttempts)
            throws IOException {
        if (single.waiting() && hold.attempts() == 0) {
            // MongoDB found down by an earlier record of this poll: another try would block as long again
            single.heldWithoutAttempt(hold);
        } else if (single.attempt(delivery, op, hold)) {
            return;
        }
        keepHeld(delivery, op, hold, mostAttempts);
    }

    /** Renews a record that failed, to try it again on a later poll; on its last delivery, dead-letters it instead. */
    private void keepHeld(RecordDelivery delivery, Operation op, HoldClock.Hold hold, int[] mostAttempts) {
        if (delivery.deliveryCount() >= deliveryLimit) {
            single.deadLetterHeld(delivery, op, hold, "last delivery (" + delivery.deliveryCount() + " of the broker's "
                    + deliveryLimit + ", group.share.delivery.count.limit)");
            return;
        }
        delivery.renew();
        synchronized (held) {
            held.put(new Key(delivery.record().partition(), delivery.record().offset()),
                    new Held(op, hold, System.nanoTime()));
        }
        mostAttempts[0] = Math.max(mostAttempts[0], Math.max(1, hold.attempts()));
    }

    /** Held records that did not come back within two locks went to another consumer (the lock expired). */
    private void forgetLost() {
        long horizon = System.nanoTime() - lock().multipliedBy(2).plus(pollTimeout).toNanos();
        synchronized (held) {
            for (Iterator<Held> it = held.values().iterator(); it.hasNext(); ) {
                Held h = it.next();
                if (h.seenNanos() < horizon) {
                    it.remove();
                    single.released(h.hold());
                }
            }
        }
    }

    private Duration lock() {
        try {
            return consumer.acquisitionLockTimeoutMs().map(Duration::ofMillis).orElse(DEFAULT_LOCK);
        } catch (RuntimeException e) {
            return DEFAULT_LOCK;
        }
    }

    /** Acknowledgements sent, then the consumer closed: what it still held goes back to the group. */
    private void close() {
        probes.shutdownNow();
        synchronized (held) {
            held.values().forEach(h -> single.released(h.hold()));
            held.clear();
        }
        try {
            try {
                consumer.commitSync(Duration.ofSeconds(5));
            } catch (WakeupException e) {
                consumer.commitSync(Duration.ofSeconds(5));   // the stop's wakeup, not yet taken by a poll
            }
        } catch (RuntimeException e) {
            log.warn("Kafka share consumer {} of '{}': acknowledgements not sent on stop ({}); the broker redelivers"
                    + " those records, as duplicates", thread.getName(), topic, e.toString());
        }
        try {
            consumer.close(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            log.warn("Kafka share consumer {} of '{}' did not close cleanly: {}", thread.getName(), topic, e.toString());
        }
    }
}
