package dev.orderless.demo;

import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.apply.Operation;
import dev.orderless.message.Envelope;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;

/**
 * What the demo published and what its consumers counted, kept in the demo's database so that
 * {@code verify}, in another process, can check a run made of several.
 *
 * <pre>
 * demo_published: { _id: "student-7#12", message: "{\"entity\":\"student-7\",\"seq\":12,...}" }   one per action
 * demo_totals:    { _id: "published", messages: 3588, actions: 3000, poison: 5 }                 summed over publishes
 * demo_tallies:   { _id: "consume 4242@host 1700000000000", applied, stale, dead_lettered, retried, at }
 * </pre>
 *
 * <p>Actions are recorded before they are published: an action recorded and never delivered shows up in
 * {@code verify} as a divergence, which is what it is. A tally is each process's own count, rewritten
 * every second and at exit; a process killed with SIGKILL loses at most its last second, so the tallies
 * describe the run but {@code verify} decides "lost" from the stored state, not from them.
 */
final class Journal {
    static final String PUBLISHED = "demo_published";
    static final String TOTALS = "demo_totals";
    static final String TALLIES = "demo_tallies";
    static final List<String> COLLECTIONS = List.of(PUBLISHED, TOTALS, TALLIES);
    private static final int CHUNK = 1000;

    private final MongoCollection<BsonDocument> published;
    private final MongoCollection<BsonDocument> totals;
    private final MongoCollection<BsonDocument> tallies;
    private final Envelope envelope = new Envelope();

    Journal(MongoDatabase db) {
        this.published = db.getCollection(PUBLISHED, BsonDocument.class);
        this.totals = db.getCollection(TOTALS, BsonDocument.class);
        this.tallies = db.getCollection(TALLIES, BsonDocument.class);
    }

    /** Records {@code ops}, published as {@code messages} messages of which {@code poison} are poison. */
    void recordPublished(List<Operation> ops, int messages, int poison) {
        for (int from = 0; from < ops.size(); from += CHUNK) {
            List<BsonDocument> docs = new ArrayList<>();
            for (Operation op : ops.subList(from, Math.min(ops.size(), from + CHUNK))) {
                docs.add(new BsonDocument("_id", new BsonString(op.entity() + "#" + op.seq()))
                        .append("message", new BsonString(new String(envelope.encode(op), StandardCharsets.UTF_8))));
            }
            insertIgnoringDuplicates(docs);
        }
        totals.updateOne(eq("_id", "published"), combine(inc("messages", (long) messages), inc("actions", (long) ops.size()),
                inc("poison", (long) poison)), new UpdateOptions().upsert(true));
    }

    /** Every recorded action, decoded. */
    List<Operation> publishedOps() {
        List<Operation> ops = new ArrayList<>();
        published.find().forEach(doc -> ops.add(envelope.decode(
                doc.getString("message").getValue().getBytes(StandardCharsets.UTF_8))));
        return ops;
    }

    /** The sums over every publish: messages, actions, poison (each 0 if nothing was published). */
    Totals totals() {
        BsonDocument doc = totals.find(eq("_id", "published")).first();
        if (doc == null) {
            return new Totals(0, 0, 0);
        }
        return new Totals(number(doc, "messages"), number(doc, "actions"), number(doc, "poison"));
    }

    /** Writes this process's counts so far (replacing its earlier tally). */
    void tally(String process, Counts counts) {
        tallies.updateOne(eq("_id", process), combine(set("applied", new BsonInt64((long) counts.applied())),
                set("stale", new BsonInt64((long) counts.stale())),
                set("dead_lettered", new BsonInt64((long) counts.deadLettered())),
                set("retried", new BsonInt64((long) counts.retried())),
                set("at", new BsonDateTime(Instant.now().toEpochMilli()))), new UpdateOptions().upsert(true));
    }

    /** The tallies of every process, summed. */
    Totals.Tally tallied() {
        long applied = 0;
        long stale = 0;
        long deadLettered = 0;
        int processes = 0;
        for (BsonDocument doc : tallies.find()) {
            applied += number(doc, "applied");
            stale += number(doc, "stale");
            deadLettered += number(doc, "dead_lettered");
            processes++;
        }
        return new Totals.Tally(applied, stale, deadLettered, processes);
    }

    private void insertIgnoringDuplicates(List<BsonDocument> docs) {
        try {
            published.insertMany(docs, new InsertManyOptions().ordered(false));
        } catch (MongoBulkWriteException e) {
            // the same action recorded twice (a publish re-run with the same stamps) is still one action
            boolean onlyDuplicates = e.getWriteErrors().stream()
                    .allMatch(w -> ErrorCategory.fromErrorCode(w.getCode()) == ErrorCategory.DUPLICATE_KEY);
            if (!onlyDuplicates || e.getWriteConcernError() != null) {
                throw e;
            }
        }
    }

    private static long number(BsonDocument doc, String field) {
        return doc.containsKey(field) && doc.get(field).isNumber() ? doc.getNumber(field).longValue() : 0;
    }

    /** What was published, summed over every publish. */
    record Totals(long messages, long actions, long poison) {
        /** What the consumer processes counted, summed. */
        record Tally(long applied, long stale, long deadLettered, int processes) {
        }
    }
}
