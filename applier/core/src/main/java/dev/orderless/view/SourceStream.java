package dev.orderless.view;

import static com.mongodb.client.model.Filters.ne;

import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import dev.orderless.InvalidConfigurationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * The source collection as a feeder reads it: its change stream (full documents looked up,
 * {@code updateDescription} projected away so an event stays far from 16 MB, each poll waiting at most
 * the poll wait), a scan of it, and the oldest entry of the oplog. Knows MongoDB; decides nothing.
 */
final class SourceStream {
    private final MongoCollection<BsonDocument> source;
    private final FeederOptions options;
    private final Optional<MongoClient> client;

    SourceStream(MongoCollection<BsonDocument> source, FeederOptions options, Optional<MongoClient> client) {
        this.source = source;
        this.options = options;
        this.client = client;
    }

    /** The stream from now: every write after this call is in it. */
    MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> fromNow() {
        return stream().cursor();
    }

    /** The stream after {@code token}; throws the server's error if it is no longer resumable. */
    MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> resumeAfter(BsonDocument token) {
        return stream().resumeAfter(token).cursor();
    }

    /** The stream from {@code time} in the oplog. */
    MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> startAt(BsonTimestamp time) {
        return stream().startAtOperationTime(time).cursor();
    }

    /**
     * Every document of the source, read from the primary with majority read concern, given to
     * {@code each} in turn; {@code beforeEach} runs before each is read (to check the lease, or stop).
     */
    void scan(Runnable beforeEach, Consumer<BsonDocument> each) {
        MongoCollection<BsonDocument> primary = source.withReadPreference(ReadPreference.primary())
                .withReadConcern(ReadConcern.MAJORITY);
        try (MongoCursor<BsonDocument> scan = primary.find().iterator()) {
            while (scan.hasNext()) {
                beforeEach.run();
                each.accept(scan.next());
            }
        }
    }

    /** The oldest entry of local.oplog.rs, for {@link FeederOptions.Bootstrap#OPLOG_START}. */
    BsonTimestamp oldestOplogEntry() {
        MongoClient mongo = client.orElseThrow(() -> new InvalidConfigurationException(
                "feeder '" + options.resource() + "': OPLOG_START needs the MongoClient (builder.client(...))"));
        Document first = mongo.getDatabase("local").getCollection("oplog.rs").find(ne("op", "n"))
                .sort(new Document("$natural", 1)).limit(1).first();
        if (first == null) {
            throw new FeederStoppedException("feeder '" + options.resource() + "': local.oplog.rs is empty or absent;"
                    + " OPLOG_START needs a replica set, use SCAN");
        }
        return first.get("ts", BsonTimestamp.class);
    }

    private ChangeStreamIterable<BsonDocument> stream() {
        return source.watch(List.of(Aggregates.project(Projections.exclude("updateDescription"))))
                .fullDocument(FullDocument.UPDATE_LOOKUP)
                .maxAwaitTime(options.pollWait().toMillis(), TimeUnit.MILLISECONDS);
    }
}
