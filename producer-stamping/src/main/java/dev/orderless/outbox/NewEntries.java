package dev.orderless.outbox;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the relay of new entries as they are inserted, through a change stream on the outbox: what makes
 * its latency low. Nothing depends on it for correctness: a missed event (a gap while the stream is
 * reopened, a server without change streams) only waits for the relay's next sweep. No resume token is
 * kept for the same reason.
 */
final class NewEntries implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(NewEntries.class);
    /** "The $changeStream stage is only supported on replica sets", and no such command. */
    private static final Set<Integer> UNSUPPORTED = Set.of(40573, 59, 115);

    private final MongoCollection<BsonDocument> entries;
    private final Runnable onInsert;
    private final CountDownLatch stopped;
    private final Duration retry;
    private final String name;

    NewEntries(MongoCollection<BsonDocument> entries, Runnable onInsert, CountDownLatch stopped, Duration retry,
               String name) {
        this.entries = entries;
        this.onInsert = onInsert;
        this.stopped = stopped;
        this.retry = retry;
        this.name = name;
    }

    @Override
    public void run() {
        String lastProblem = "";
        while (stopped.getCount() > 0) {
            try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = entries
                    .watch(List.of(Aggregates.match(eq("operationType", "insert"))))
                    .maxAwaitTime(500, TimeUnit.MILLISECONDS).cursor()) {
                onInsert.run();   // entries inserted while no stream was open: look now
                lastProblem = "";
                while (stopped.getCount() > 0) {
                    if (cursor.tryNext() != null) {
                        onInsert.run();
                    }
                }
            } catch (MongoCommandException e) {
                if (UNSUPPORTED.contains(e.getErrorCode())) {
                    log.info("outbox relay '{}': no change streams here ({}): new entries are found by the sweep",
                            name, e.getErrorMessage());
                    return;
                }
                lastProblem = pause(lastProblem, e);
            } catch (MongoException | IllegalStateException e) {
                lastProblem = pause(lastProblem, e);
            }
        }
    }

    private String pause(String lastProblem, RuntimeException e) {
        String problem = e.getClass().getSimpleName();
        if (!problem.equals(lastProblem)) {
            // the relay says whether MongoDB is down; this only loses the early wake-up until it is back
            log.debug("outbox relay '{}': change stream closed ({}); reopening every {} ms", name, e.getMessage(),
                    retry.toMillis());
        }
        try {
            stopped.await(retry.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            stopped.countDown();
        }
        return problem;
    }
}
