package dev.orderless.view;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * When a term commits its resume token. After every poll:
 *
 * <ol>
 *   <li>A commit is due once {@code commitEvery} events were handled since the last one, or
 *       {@code commitInterval} has passed since it.
 *   <li>If due and the stream's token differs from the last one committed, commit that token. An empty poll
 *       moves the token too (the post-batch token), so a quiet stream commits on the interval and its
 *       position never falls off the oplog.
 *   <li>If due with nothing new to commit, the interval starts again; the event count does not.
 * </ol>
 * On a clean stop the latest token is committed if it differs from the last one ({@link #onStop}). Pure
 * and confined to the term's thread; the caller commits and reports back ({@link #committed}).
 */
final class CommitPolicy {
    private final int every;
    private final Duration interval;
    private Optional<BsonDocument> committed;
    private long sinceCommit;
    private Instant lastCommit;

    /**
     * @param committed the token of the stored position the term began from, if any
     * @param now       when the term began: the interval counts from here
     */
    CommitPolicy(int every, Duration interval, Optional<BsonDocument> committed, Instant now) {
        this.every = every;
        this.interval = interval;
        this.committed = committed;
        this.lastCommit = now;
    }

    /** One event was handled. */
    void event() {
        sinceCommit++;
    }

    /** The token to commit now, if a commit is due and {@code token} (the stream's, if it has one) is new. */
    Optional<BsonDocument> due(Optional<BsonDocument> token, Instant now) {
        boolean due = sinceCommit >= every || !now.isBefore(lastCommit.plus(interval));
        if (!due) {
            return Optional.empty();
        }
        if (token.isPresent() && !token.equals(committed)) {
            return token;
        }
        lastCommit = now;   // nothing new: the next commit is due an interval from now
        return Optional.empty();
    }

    /** {@code token} was committed at {@code now}: the count and the interval start again. */
    void committed(BsonDocument token, Instant now) {
        committed = Optional.of(token);
        sinceCommit = 0;
        lastCommit = now;
    }

    /** The token to hand a successor on a clean stop: the stream's, if it has one not committed yet. */
    Optional<BsonDocument> onStop(Optional<BsonDocument> token) {
        return token.isPresent() && !token.equals(committed) ? token : Optional.empty();
    }
}
