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
 *
 * <p>It never polls faster than once per {@value #AWAIT_MILLIS} ms while nothing comes: a real MongoDB
 * holds each empty poll that long, but a server that answers at once (the embedded one) would otherwise
 * make this thread spin a core for as long as the outbox is idle. If the thread meets anything it cannot
 * go on from, it says so at ERROR and ends; the relay then finds new entries by its sweep alone.
 */
final class NewEntries implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(NewEntries.class);
    /** "The $changeStream stage is only supported on replica sets", and no such command. */
    private static final Set<Integer> UNSUPPORTED = Set.of(40573, 59, 115);
    static final long AWAIT_MILLIS = 500;

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
        try {
            watch();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   // asked to end
        } catch (Throwable e) {   // the relay goes on without it: say so, never end in silence
            log.error("outbox relay '{}': the watch for new entries stopped on an unexpected {}; new entries are"
                    + " found by the sweep every {} ms", name, e, retry.toMillis());
        }
    }

    private void watch() throws InterruptedException {
        String lastProblem = "";
        while (stopped.getCount() > 0) {
            try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = entries
                    .watch(List.of(Aggregates.match(eq("operationType", "insert"))))
                    .maxAwaitTime(AWAIT_MILLIS, TimeUnit.MILLISECONDS).cursor()) {
                onInsert.run();   // entries inserted while no stream was open: look now
                lastProblem = "";
                while (stopped.getCount() > 0) {
                    long began = System.nanoTime();
                    if (cursor.tryNext() != null) {
                        onInsert.run();
                        continue;
                    }
                    long left = TimeUnit.MILLISECONDS.toNanos(AWAIT_MILLIS) - (System.nanoTime() - began);
                    if (left > 0 && stopped.await(left, TimeUnit.NANOSECONDS)) {
                        return;   // the server did not wait for data: wait here instead of spinning
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

    private String pause(String lastProblem, RuntimeException e) throws InterruptedException {
        String problem = e.getClass().getSimpleName();
        if (!problem.equals(lastProblem)) {
            // the relay says whether MongoDB is down; this only loses the early wake-up until it is back
            log.debug("outbox relay '{}': change stream closed ({}); reopening every {} ms", name, e.getMessage(),
                    retry.toMillis());
        }
        stopped.await(retry.toMillis(), TimeUnit.MILLISECONDS);
        return problem;
    }
}
