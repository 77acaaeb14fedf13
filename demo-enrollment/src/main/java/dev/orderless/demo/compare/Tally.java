package dev.orderless.demo.compare;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What happened to each message of a trial, recorded by whichever consumer handled it: when it was
 * published, when it was first applied, and whether an entity's writes were applied out of seq order.
 * Thread-safe; a redelivered message that is applied again keeps its first time.
 */
final class Tally {
    private final AtomicLongArray publishedAt;
    private final AtomicLongArray appliedAt;
    private final AtomicInteger applied = new AtomicInteger();
    private final AtomicLong outOfOrder = new AtomicLong();
    private final ConcurrentHashMap<String, Long> highestSeq = new ConcurrentHashMap<>();
    private final Set<String> faultyKeys = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicIntegerArray redelivered;
    private final AtomicLong roundTrips = new AtomicLong();
    private final AtomicInteger lastBy = new AtomicInteger(-1);

    Tally(int messages) {
        this.publishedAt = new AtomicLongArray(messages);
        this.appliedAt = new AtomicLongArray(messages);
        this.redelivered = new java.util.concurrent.atomic.AtomicIntegerArray(messages);
    }

    /** Consumer process {@code process} is handling a message: it is active. */
    void handledBy(int process) {
        lastBy.set(process);
    }

    /** The consumer process that handled the latest message (-1 before any): an active one. */
    int lastBy() {
        return lastBy.get();
    }

    /** Counts the MongoDB commands of every consumer of the trial. */
    AtomicLong roundTrips() {
        return roundTrips;
    }

    /** Message {@code index} came again: a killed consumer held it. */
    void redelivered(int index) {
        redelivered.set(index, 1);
    }

    boolean wasRedelivered(int index) {
        return redelivered.get(index) == 1;
    }

    void published(int index, long nanos) {
        publishedAt.set(index, nanos);
    }

    /** Message {@code index} (student {@code entity}, {@code seq}) was written to MongoDB at {@code nanos}. */
    void applied(int index, String entity, long seq, long nanos) {
        long[] before = {0};
        highestSeq.compute(entity, (k, highest) -> {
            before[0] = highest == null ? 0 : highest;
            return highest == null ? seq : Math.max(highest, seq);
        });
        if (before[0] > seq) {   // a write with a lower seq after one with a higher: out of order
            outOfOrder.incrementAndGet();
        }
        if (appliedAt.compareAndSet(index, 0, nanos)) {
            applied.incrementAndGet();
        }
    }

    /** The key of the message a stuck handler held. */
    void faulty(String entity) {
        faultyKeys.add(entity);
    }

    int applied() {
        return applied.get();
    }

    long outOfOrder() {
        return outOfOrder.get();
    }

    long publishedAt(int index) {
        return publishedAt.get(index);
    }

    long appliedAt(int index) {
        return appliedAt.get(index);
    }

    Set<String> faultyKeys() {
        return Set.copyOf(faultyKeys);
    }
}
