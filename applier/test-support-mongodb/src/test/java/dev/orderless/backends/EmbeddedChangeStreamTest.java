package dev.orderless.backends;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.OperationType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The embedded server's change streams cost what they deliver ({@link IndexedOplog}): an update lookup
 * examines one document and a poll reads only the oplog entries it delivers, whatever the size of the
 * collection and of the oplog; and the streams keep mongo-java-server's semantics (start time, filtered
 * events, drops, concurrent writers; the conformance contract has the rest). Counts, not timings. Always the embedded server, whatever
 * backend the run uses: it is what is under test.
 */
class EmbeddedChangeStreamTest {
    private static final String HOOK_GONE = "the indexed oplog (IndexedOplog) is no longer in use:"
            + " has mongo-java-server been upgraded?";
    private static final String DB = "change_stream_test";

    private EmbeddedMongo mongo;
    private MongoClient client;
    private MongoCollection<Document> docs;

    @BeforeEach
    void start() {
        mongo = EmbeddedMongo.start();
        client = mongo.newClient();
        docs = client.getDatabase(DB).getCollection("docs");
    }

    @AfterEach
    void close() {
        client.close();
        mongo.close();
    }

    /** What one update event and one idle poll cost, with {@code size} documents and as many oplog entries. */
    private record Cost(long examinedByLookup, long entriesReadForEvent, long entriesReadIdle, long oplogExaminedIdle) {
    }

    private Cost costWith(int size) {
        fill(docs, size);
        try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> cursor =
                     docs.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
            docs.updateOne(eq("_id", "e" + (size / 2)), set("v", 2));

            long examined = examined();
            long read = mongo.oplogEntriesRead();
            ChangeStreamDocument<Document> update = next(cursor, 1).get(0);
            long examinedByLookup = examined() - examined;
            long entriesReadForEvent = mongo.oplogEntriesRead() - read;

            assertThat(update.getFullDocument()).containsEntry("_id", "e" + (size / 2)).containsEntry("v", 2);

            read = mongo.oplogEntriesRead();
            long oplogExamined = mongo.documentsExamined("local", "oplog.rs");
            assertThat(cursor.tryNext()).isNull();
            return new Cost(examinedByLookup, entriesReadForEvent, mongo.oplogEntriesRead() - read,
                    mongo.documentsExamined("local", "oplog.rs") - oplogExamined);
        }
    }

    @Test
    void an_update_event_and_an_idle_poll_cost_the_same_with_1k_and_with_100k_documents() {
        Cost small = costWith(1_000);
        close();
        start();
        Cost large = costWith(100_000);

        assertThat(large).as("100k documents and oplog entries against 1k").isEqualTo(small);
        assertThat(large.examinedByLookup()).as("documents the update lookup examined; " + HOOK_GONE).isEqualTo(1);
        assertThat(large.entriesReadForEvent()).as("oplog entries read to deliver one event").isEqualTo(1);
        assertThat(large.entriesReadIdle()).as("oplog entries an idle poll read").isZero();
        assertThat(large.oplogExaminedIdle()).as("local.oplog.rs documents an idle poll examined").isZero();
    }

    @Test
    void a_stream_reads_no_entry_of_another_collection() {
        MongoCollection<Document> other = client.getDatabase(DB).getCollection("other");
        try (var cursor = docs.watch().cursor()) {
            fill(other, 1_000);
            long read = mongo.oplogEntriesRead();

            assertThat(cursor.tryNext()).isNull();
            assertThat(mongo.oplogEntriesRead() - read).isZero();

            docs.insertOne(new Document("_id", "mine"));
            assertThat(next(cursor, 1).get(0).getDocumentKey().getString("_id").getValue()).isEqualTo("mine");
        }
    }

    @Test
    void entries_the_pipeline_filtered_out_are_not_read_again() {
        fill(docs, 100);
        try (var cursor = docs.watch(List.of(Aggregates.match(eq("operationType", "insert")))).cursor()) {
            docs.updateMany(new Document(), set("v", 2));
            assertThat(cursor.tryNext()).isNull();
            long read = mongo.oplogEntriesRead();

            assertThat(cursor.tryNext()).isNull();
            assertThat(mongo.oplogEntriesRead() - read).as("entries read by a poll after 100 filtered ones").isZero();

            docs.insertOne(new Document("_id", "new"));
            assertThat(next(cursor, 1).get(0).getOperationType()).isEqualTo(OperationType.INSERT);
        }
    }

    @Test
    void start_at_operation_time_starts_at_that_event_inclusive() {
        BsonTimestamp second;
        try (var cursor = docs.watch().cursor()) {
            for (int i = 1; i <= 3; i++) {
                docs.insertOne(new Document("_id", "e" + i));
            }
            second = next(cursor, 3).get(1).getClusterTime();
        }
        try (var cursor = docs.watch().startAtOperationTime(second).cursor()) {
            assertThat(next(cursor, 2)).extracting(e -> e.getDocumentKey().getString("_id").getValue())
                    .containsExactly("e2", "e3");
        }
    }

    @Test
    void a_drop_is_delivered_and_resuming_after_it_invalidates() {
        ChangeStreamDocument<Document> drop;
        try (var cursor = docs.watch().cursor()) {
            docs.insertOne(new Document("_id", "e1"));
            docs.drop();
            List<ChangeStreamDocument<Document>> events = next(cursor, 2);
            assertThat(events.get(0).getOperationType()).isEqualTo(OperationType.INSERT);
            drop = events.get(1);
            assertThat(drop.getOperationType()).isEqualTo(OperationType.DROP);
        }
        try (var cursor = docs.watch().resumeAfter(drop.getResumeToken()).cursor()) {
            assertThat(next(cursor, 1).get(0).getOperationType()).isEqualTo(OperationType.INVALIDATE);
        }
    }

    @Test
    void a_stream_starts_at_the_oldest_entry_of_local_oplog_rs_as_OPLOG_START_does() {
        try (var cursor = docs.watch().cursor()) {
            docs.insertMany(List.of(new Document("_id", "e1"), new Document("_id", "e2")));
            next(cursor, 2);
        }
        Document oldest = client.getDatabase("local").getCollection("oplog.rs").find(in("op", "i", "u", "d"))
                .sort(new Document("$natural", 1)).limit(1).first();
        assertThat(oldest).isNotNull();
        assertThat(oldest.get("o", Document.class).getString("_id")).isEqualTo("e1");
        try (var cursor = docs.watch().startAtOperationTime(oldest.get("ts", BsonTimestamp.class)).cursor()) {
            assertThat(next(cursor, 2)).extracting(e -> e.getDocumentKey().getString("_id").getValue())
                    .containsExactly("e1", "e2");
        }
    }

    @Test
    void with_concurrent_writers_on_two_collections_a_stream_sees_every_event_of_its_own_in_order() throws Exception {
        MongoCollection<Document> other = client.getDatabase(DB).getCollection("other");
        int perWriter = 300;
        int writers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try (var cursor = docs.watch().cursor()) {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < perWriter; i++) {
                        (i % 2 == 0 ? docs : other).insertOne(new Document("_id", writer + "-" + i));
                    }
                }));
            }
            List<ChangeStreamDocument<Document>> events = next(cursor, writers * perWriter / 2);
            for (Future<?> writer : done) {
                writer.get(30, TimeUnit.SECONDS);
            }

            Set<String> ids = new HashSet<>();
            for (ChangeStreamDocument<Document> event : events) {
                ids.add(event.getDocumentKey().getString("_id").getValue());
            }
            assertThat(ids).hasSize(writers * perWriter / 2);
            assertThat(events).extracting(ChangeStreamDocument::getClusterTime).isSorted();
            assertThat(cursor.tryNext()).isNull();
        } finally {
            pool.shutdownNow();
        }
    }

    private long examined() {
        return mongo.documentsExamined(DB, "docs");
    }

    private static void fill(MongoCollection<Document> collection, int size) {
        List<Document> batch = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            batch.add(new Document("_id", "e" + i).append("v", 1));
            if (batch.size() == 10_000) {
                collection.insertMany(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            collection.insertMany(batch);
        }
    }

    private static <T> List<T> next(MongoChangeStreamCursor<T> cursor, int count) {
        List<T> events = new ArrayList<>();
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            T event = cursor.tryNext();
            while (event != null) {
                events.add(event);
                event = events.size() < count ? cursor.tryNext() : null;
            }
            return events.size() >= count;
        });
        return events;
    }
}
