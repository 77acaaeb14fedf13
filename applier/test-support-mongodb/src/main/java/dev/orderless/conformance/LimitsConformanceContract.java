package dev.orderless.conformance;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.elemMatch;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.not;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.pullByFilter;
import static com.mongodb.client.model.Updates.push;
import static com.mongodb.client.model.Updates.pushEach;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationStrength;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.UpdateOptions;
import dev.orderless.backends.KnownDifference;
import dev.orderless.backends.MongoBackend;
import dev.orderless.testing.MongoExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonMaximumSizeExceededException;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The server behaviours the applier's edge handling relies on (issue: never stuck), pinned so a real
 * MongoDB settles them: which index a duplicate key names, what a collation does to the guards, the size
 * limits and their codes, type bracketing, and the delete's pull-and-push update. As in
 * {@link MongoConformanceContract}, a backend declaring a {@link KnownDifference} gets its deviation pinned.
 */
@ExtendWith(MongoExtension.class)
public abstract class LimitsConformanceContract {
    private static final Set<String> DIFFERENCES_SEEN = ConcurrentHashMap.newKeySet();
    private static final AtomicReference<String> BACKEND = new AtomicReference<>("?");
    private static final int SIXTEEN_MB = 16 * 1024 * 1024;

    private MongoBackend backend;
    private MongoDatabase db;
    private MongoCollection<BsonDocument> docs;

    @BeforeEach
    void setUp(MongoBackend backend, MongoDatabase db) {
        this.backend = backend;
        this.db = db;
        BACKEND.set(backend.description());
        this.docs = db.getCollection("limits", BsonDocument.class);
    }

    @AfterAll
    static void report() {
        System.out.println("[conformance] limits on " + BACKEND.get() + "; behaviours that differ from MongoDB: "
                + (DIFFERENCES_SEEN.isEmpty() ? "none" : new java.util.TreeSet<>(DIFFERENCES_SEEN)));
    }

    @Test
    void a_duplicate_key_from_a_unique_secondary_index_names_that_index() {
        docs.createIndex(Indexes.ascending("email"), new IndexOptions().unique(true));
        docs.insertOne(doc("owner").append("email", new BsonString("taken@example.com")));

        assertThatThrownBy(() -> docs.updateOne(and(eq("_id", "new"), not(gte("_floor", 5L))),
                set("email", "taken@example.com"), new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> {
                    assertThat(ErrorCategory.fromErrorCode(e.getError().getCode())).isEqualTo(ErrorCategory.DUPLICATE_KEY);
                    assertThat(e.getError().getMessage()).contains("index: email_1 dup key");
                });
    }

    @Test
    void a_duplicate_key_on_the_entity_key_names_the_id_index() {
        docs.insertOne(doc("e1").append("v", new BsonInt64(5)));

        assertThatThrownBy(() -> docs.updateOne(and(eq("_id", "e1"), lt("v", 3L)), set("v", 3L),
                new UpdateOptions().upsert(true)))
                .isInstanceOfSatisfying(MongoWriteException.class,
                        e -> assertThat(e.getError().getMessage()).contains("index: _id_ dup key"));
    }

    @Test
    void a_default_collation_shows_on_the_id_index_and_changes_elemMatch() {
        db.createCollection("folded", new CreateCollectionOptions().collation(
                Collation.builder().locale("en").collationStrength(CollationStrength.SECONDARY).build()));
        MongoCollection<BsonDocument> folded = db.getCollection("folded", BsonDocument.class);
        folded.insertOne(doc("e1").append("classes", new BsonArray(List.of(entry("CS 101", 1)))));

        long matches = folded.countDocuments(elemMatch("classes", eq("name", "cs 101")));
        BsonDocument idIndex = folded.listIndexes(BsonDocument.class).into(new ArrayList<>()).stream()
                .filter(i -> i.getString("name").getValue().equals("_id_")).findFirst().orElseThrow();

        if (differs(KnownDifference.NO_COLLATION)) {
            assertThat(matches).isZero();
            assertThat(idIndex.containsKey("collation")).isFalse();
        } else {
            assertThat(matches).as("'cs 101' matches 'CS 101' under strength 2").isEqualTo(1);
            assertThat(idIndex.getDocument("collation").getString("locale").getValue()).isEqualTo("en");
        }
    }

    @Test
    void a_document_cannot_grow_past_16_mb() {
        docs.insertOne(doc("big").append("blob", new BsonString("x".repeat(SIXTEEN_MB - 200_000))));

        if (differs(KnownDifference.NO_DOCUMENT_SIZE_LIMIT)) {
            docs.updateOne(eq("_id", "big"), push("classes", entry("CS 101", 1)
                    .append("notes", new BsonString("y".repeat(300_000)))));
            assertThat(docs.countDocuments(elemMatch("classes", eq("name", "CS 101")))).isEqualTo(1);
        } else {
            assertThatThrownBy(() -> docs.updateOne(eq("_id", "big"), push("classes", entry("CS 101", 1)
                    .append("notes", new BsonString("y".repeat(300_000))))))
                    .isInstanceOfSatisfying(MongoWriteException.class,
                            e -> assertThat(e.getError().getCode()).isIn(10334, 17419, 17420, 13548));
        }
    }

    @Test
    void the_driver_refuses_to_send_a_command_past_16_mb() {
        assertThatThrownBy(() -> docs.updateOne(eq("_id", "huge"), set("blob", "x".repeat(SIXTEEN_MB + 64 * 1024)),
                new UpdateOptions().upsert(true)))
                .isInstanceOf(BsonMaximumSizeExceededException.class);
        assertThat(docs.countDocuments()).isZero();
    }

    @Test
    void a_string_seq_never_compares_with_a_number() {
        docs.insertOne(doc("f1").append("classes", new BsonArray(List.of(
                new BsonDocument("name", new BsonString("CS 101")).append("seq", new BsonString("7"))))));

        assertThat(docs.countDocuments(elemMatch("classes", and(eq("name", "CS 101"), lt("seq", 9L))))).isZero();
        assertThat(docs.countDocuments(elemMatch("classes", and(eq("name", "CS 101"), not(gte("seq", 9L))))))
                .as("$not $gte matches what cannot be compared").isEqualTo(1);
    }

    @Test
    void a_pull_of_keyed_entries_below_a_seq_and_a_push_to_another_array_apply_in_one_update() {
        docs.insertOne(doc("d1").append("_v", new BsonInt64(3)).append("classes", new BsonArray(List.of(
                entry("CS 101", 1), entry("MA 201", 9), entry("PH 100", 2), new BsonDocument("seq", new BsonInt64(1)))))
                .append("deleted_classes", new BsonArray()));

        long matched = docs.updateOne(and(eq("_id", "d1"), eq("_v", 3L)), combine(
                set("_floor", 5L),
                pullByFilter(new BsonDocument("classes", pullBelow(5L))),
                pushEach("deleted_classes", List.of(entry("CS 101", 5), entry("PH 100", 5))),
                inc("_v", 1L))).getMatchedCount();

        assertThat(matched).isEqualTo(1);
        BsonDocument stored = docs.find(eq("_id", "d1")).first();
        assertThat(stored.getArray("classes")).as("an entry without a key stays")
                .containsExactly(entry("MA 201", 9), new BsonDocument("seq", new BsonInt64(1)));
        assertThat(stored.getArray("deleted_classes")).containsExactly(entry("CS 101", 5), entry("PH 100", 5));
        assertThat(stored.getInt64("_v").getValue()).isEqualTo(4);
    }

    @Test
    void the_pull_compares_seqs_as_gte_does_an_array_counts_if_any_element_is_at_or_above() {
        BsonDocument arraySeqHigh = new BsonDocument("name", new BsonString("A")).append("seq",
                new BsonArray(List.of(new BsonInt64(1), new BsonInt64(9))));
        BsonDocument arraySeqLow = new BsonDocument("name", new BsonString("B")).append("seq",
                new BsonArray(List.of(new BsonInt64(1), new BsonInt64(2))));
        BsonDocument stringSeq = new BsonDocument("name", new BsonString("C")).append("seq", new BsonString("9"));
        BsonDocument doubleSeq = new BsonDocument("name", new BsonString("D")).append("seq", new BsonDouble(5.0));
        BsonDocument noSeq = new BsonDocument("name", new BsonString("E"));
        docs.insertOne(doc("d2").append("classes", new BsonArray(List.of(
                arraySeqHigh, arraySeqLow, stringSeq, doubleSeq, noSeq))));

        docs.updateOne(eq("_id", "d2"), pullByFilter(new BsonDocument("classes", pullBelow(5L))));

        assertThat(docs.find(eq("_id", "d2")).first().getArray("classes"))
                .as("kept: a seq at or above 5, in an array or as a double").containsExactly(arraySeqHigh, doubleSeq);
    }

    /** The delete's pull condition: an entry with a key whose seq is not at or above {@code seq}. */
    private static BsonDocument pullBelow(long seq) {
        BsonDocument condition = exists("name").toBsonDocument();
        condition.putAll(not(gte("seq", seq)).toBsonDocument());
        return condition;
    }

    private boolean differs(KnownDifference difference) {
        boolean declared = backend.knownDifferences().contains(difference);
        if (declared) {
            DIFFERENCES_SEEN.add(difference.name());
        }
        return declared;
    }

    private static BsonDocument doc(String id) {
        return new BsonDocument("_id", new BsonString(id));
    }

    private static BsonDocument entry(String name, long seq) {
        return new BsonDocument("name", new BsonString(name)).append("seq", new BsonInt64(seq));
    }
}
