package dev.orderless.view;

import java.util.Optional;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether {@link FeederOptions.Bootstrap#OPLOG_START} may replay the oplog instead of scanning: only
 * from the last change the view committed, and only while the oplog still holds it. Anything else would
 * skip a gap (history lost) or every document last written before the oplog's window (no position).
 */
final class OplogReach {
    private static final Logger log = LoggerFactory.getLogger(OplogReach.class);

    private OplogReach() {
    }

    /** Where to replay from, or empty: rebuild by stream-then-scan. */
    static Optional<BsonTimestamp> startAt(String resource, Optional<BsonTimestamp> lastCommitted,
                                           Supplier<BsonTimestamp> oldestEntry) {
        if (lastCommitted.isEmpty()) {
            log.info("'{}': OPLOG_START has no committed change to replay from; rebuilding by stream-then-scan, the only"
                    + " rebuild that misses no document", resource);
            return Optional.empty();
        }
        BsonTimestamp oldest = oldestEntry.get();
        if (oldest.compareTo(lastCommitted.get()) > 0) {
            log.warn("'{}': the oplog's oldest entry {} is newer than the last committed change {}; replaying it would"
                    + " skip what lies between, so rebuilding by stream-then-scan", resource, oldest, lastCommitted.get());
            return Optional.empty();
        }
        return lastCommitted;
    }
}
