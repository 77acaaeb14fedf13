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

    Tally(int messages) {
        this.publishedAt = new AtomicLongArray(messages);
        this.appliedAt = new AtomicLongArray(messages);
    }

    int messages() {
        return publishedAt.length();
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

    /** A key the fault held up (the faulty lane's, or the stuck or killed consumer's). */
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
