package dev.orderless.consume.internal;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a consumer waits for MongoDB: from the first apply that found it unavailable (to every operation, not
 * just to one) until MongoDB next answers any of its applies. Its messages are held meanwhile (nothing is lost);
 * this is what says so, in the consumer's state, its health and one WARN line on entering (naming MongoDB's
 * address where the failure does) and one INFO line on leaving, not a line per held message.
 */
public final class MongoWait {
    private static final Logger log = LoggerFactory.getLogger(MongoWait.class);

    private final String queue;
    private final AtomicReference<String> waiting = new AtomicReference<>();

    public MongoWait(String queue) {
        this.queue = queue;
    }

    /** An apply found MongoDB unavailable, saying {@code why}. */
    void unavailable(String why) {
        if (waiting.getAndSet(why) == null) {
            log.warn("consumer of '{}' waits for MongoDB, its messages held (nothing is lost) until it answers: {}",
                    queue, why);
        }
    }

    /** MongoDB answered an apply. */
    void answered() {
        if (waiting.getAndSet(null) != null) {
            log.info("consumer of '{}': MongoDB answers again", queue);
        }
    }

    /** What it waits for, while it does: {@code MongoDB: <the last failure>}. */
    public Optional<String> waitingFor() {
        return Optional.ofNullable(waiting.get()).map(why -> "MongoDB: " + why);
    }
}
