package dev.orderless.view;

import com.mongodb.MongoException;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a term's change stream starts. Never from "now", never across a gap:
 *
 * <ol>
 *   <li>A committed position: resume after its token ({@link Resume}).
 *   <li>No position, or one that is no longer resumable (history lost, {@link #historyLost}): rebuild.
 *       With {@link FeederOptions.Bootstrap#OPLOG_START}, replay the oplog from the last committed change
 *       ({@link ReplayOplog}), but only while the oplog still reaches back to it ({@link #oplogStart}).
 *   <li>Otherwise rebuild by stream-then-scan ({@link Scan}): the only rebuild that misses no document, as
 *       a document last written before the oplog's oldest entry is in no change event.
 * </ol>
 * Pure: what the oplog holds comes from a supplier, asked only when {@code OPLOG_START} has a change to
 * replay from.
 */
final class BootstrapChoice {
    private static final Logger log = LoggerFactory.getLogger(BootstrapChoice.class);
    /** ChangeStreamHistoryLost, ChangeStreamFatalError, CappedPositionLost, InvalidResumeToken. */
    private static final Set<Integer> HISTORY_LOST = Set.of(286, 280, 136, 260);

    /** How the stream starts. */
    sealed interface Start permits Resume, ReplayOplog, Scan {
    }

    /** After the committed token. */
    record Resume(BsonDocument token) implements Start {
    }

    /** At {@code from} in the oplog; a rebuild, {@code historyLost} or for want of a position. */
    record ReplayOplog(BsonTimestamp from, boolean historyLost) implements Start {
    }

    /** Open the stream, scan the source, then drain the stream; a rebuild, as {@link ReplayOplog}. */
    record Scan(boolean historyLost) implements Start {
    }

    private BootstrapChoice() {
    }

    /** Where a term starts: after the stored token if there is one, else a rebuild for want of a position. */
    static Start atTermStart(String resource, Optional<Position> stored, FeederOptions.Bootstrap bootstrap,
                             Supplier<BsonTimestamp> oldestOplogEntry) {
        if (stored.isPresent()) {
            return new Resume(stored.get().token());
        }
        return rebuild(resource, false, bootstrap, Optional.empty(), oldestOplogEntry);
    }

    /**
     * How to rebuild: {@code historyLost} if the stream's history was lost (the committed token is no longer
     * resumable, or the stream failed so while reading), else there was no position at all.
     */
    static Start rebuild(String resource, boolean historyLost, FeederOptions.Bootstrap bootstrap,
                         Optional<BsonTimestamp> lastCommitted, Supplier<BsonTimestamp> oldestOplogEntry) {
        if (bootstrap == FeederOptions.Bootstrap.OPLOG_START) {
            Optional<BsonTimestamp> from = oplogStart(resource, lastCommitted, oldestOplogEntry);
            if (from.isPresent()) {
                return new ReplayOplog(from.get(), historyLost);
            }
        }
        return new Scan(historyLost);
    }

    /**
     * Where {@code OPLOG_START} may replay from, or empty (rebuild by stream-then-scan): only from the last
     * change the view committed, and only while the oplog still holds it. Anything else would skip a gap
     * (history lost) or every document last written before the oplog's window (no position).
     */
    static Optional<BsonTimestamp> oplogStart(String resource, Optional<BsonTimestamp> lastCommitted,
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

    /** True if {@code e} says the stream's history is gone: rebuild, never restart at now. */
    static boolean historyLost(MongoException e) {
        return HISTORY_LOST.contains(e.getCode());
    }
}
